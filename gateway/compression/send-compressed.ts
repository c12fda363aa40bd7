// gateway/compression/: compressed answers: Accept-Encoding negotiation, the codecs and their levels, answers
// compressed once per variant, and the static files' precompressed variants.
import type { RequestContext } from '../pipeline';
import { sendJsonBytes } from '../send';
import { compressedOrUndefined, MIN_COMPRESSED_BYTES, OFFERED } from './codecs';
import { chooseEncoding, type EncodingChoice } from './negotiate';

/** Choices by Accept-Encoding value: callers send a handful of distinct values, parsed once each. */
const choices = new Map<string, EncodingChoice>();
const MAX_CHOICES = 256;

function choiceFor(header: string | undefined): EncodingChoice {
  if (header === undefined) return chooseEncoding(undefined, OFFERED);
  let choice = choices.get(header);
  if (!choice) {
    choice = chooseEncoding(header, OFFERED);
    if (choices.size < MAX_CHOICES && header.length <= 256) choices.set(header, choice);
  }
  return choice;
}

/**
 * Writes a 200 JSON answer of the public surface (a page, a listing, an insights answer),
 * compressed when the caller's Accept-Encoding allows and the body is 1,024 bytes or more (or the
 * caller refuses identity). `Vary: Accept-Encoding` either way, so caches keep the variants apart.
 * Never compressed twice (an answer with a Content-Encoding already is sent as it is). The access
 * line gets the coding and both sizes (ctx.encoded). A caller that refuses identity still gets the
 * body uncompressed when the codec fails: one readable answer beats a 500 for a served request.
 */
export function sendJsonCompressible(ctx: RequestContext, bytes: Buffer): void {
  const { res } = ctx;
  res.setHeader('Vary', 'Accept-Encoding');
  const choice = choiceFor(ctx.req.headers['accept-encoding']);
  let body = bytes;
  if (choice.coding !== 'identity' && !res.hasHeader('Content-Encoding') && (bytes.length >= MIN_COMPRESSED_BYTES || !choice.identityAcceptable)) {
    const compressed = compressedOrUndefined(choice.coding, bytes);
    if (compressed && (compressed.length < bytes.length || !choice.identityAcceptable)) {
      body = compressed;
      res.setHeader('Content-Encoding', choice.coding);
    }
  }
  ctx.encoded = { encoding: body === bytes ? 'identity' : choice.coding, bytes: bytes.length, sentBytes: body.length };
  sendJsonBytes(res, 200, body);
}
