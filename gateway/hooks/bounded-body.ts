import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors';

const tooLarge = (limit: number): ApiError =>
  new ApiError('invalid_parameter', { parameter: 'body' }, undefined, `The body is larger than ${limit} bytes.`);

/**
 * The request's raw body, at most `limit` bytes: a larger Content-Length is refused before reading,
 * and a body that grows past the limit stops being read (the connection is closed after the
 * answer). A compressed body is refused too: providers sign the bytes they send, uncompressed.
 * Refusals are 400 `invalid_parameter` naming `body`.
 */
export function readBoundedBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  const refuse = (err: ApiError): Promise<never> => {
    res.setHeader('Connection', 'close');
    req.pause();
    return Promise.reject(err);
  };
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return refuse(new ApiError('invalid_parameter', { parameter: 'body' }, undefined, 'A compressed body is not accepted.'));
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return refuse(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        refuse(tooLarge(limit)).catch(reject);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
  });
}
