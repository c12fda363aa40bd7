import { codecFailed } from './codec-failures';
import { compressAsync, compressedOrUndefined, MIN_COMPRESSED_BYTES, OFFERED } from './codecs';
import { chooseEncoding, type ContentCoding } from './negotiate';

export interface Variant {
  readonly coding: ContentCoding | 'identity';
  readonly bytes: Buffer;
}

/**
 * Bodies up to this size get their compressed forms at start-up (the OpenAPI document, the docs
 * page, Swagger UI's stylesheet: together ~0.3 s of CPU on the thread pool); a larger one (Swagger
 * UI's 1.7 MB bundle: ~1.1 s at the static levels) when first asked for, so a gateway whose
 * reference nobody reads does not pay for it.
 */
const AT_START_UP_BYTES = 256 * 1024;

/**
 * The compressed forms of a fixed body (the OpenAPI document, the reference page and its assets),
 * each made once, at the smallest level (STATIC_LEVELS), on the thread pool: at start-up (when the
 * body is made), or for a large body when first asked for. An ask that comes before its form is
 * ready is still answered compressed: at the per-request level (DYNAMIC_LEVELS, a few ms even for
 * the largest asset), made once and kept until the smaller form replaces it. A codec failure is
 * counted and logged (codec-failures.ts), and the body then goes uncompressed.
 */
export class StaticVariants {
  private readonly ready = new Map<ContentCoding, Buffer>();
  private readonly interim = new Map<ContentCoding, Buffer | undefined>();
  private readonly started = new Set<ContentCoding>();
  private readonly identity: Variant;

  constructor(readonly body: Buffer) {
    this.identity = { coding: 'identity', bytes: body };
    if (body.length >= MIN_COMPRESSED_BYTES && body.length <= AT_START_UP_BYTES) for (const coding of OFFERED) this.prepare(coding);
  }

  /** The variant to send for this Accept-Encoding. */
  pick(acceptEncoding: string | undefined): Variant {
    const choice = chooseEncoding(acceptEncoding, OFFERED);
    if (choice.coding === 'identity') return this.identity;
    if (this.body.length < MIN_COMPRESSED_BYTES && choice.identityAcceptable) return this.identity;
    const ready = this.ready.get(choice.coding);
    if (ready) return { coding: choice.coding, bytes: ready };
    this.prepare(choice.coding);
    if (!this.interim.has(choice.coding)) this.interim.set(choice.coding, compressedOrUndefined(choice.coding, this.body));
    const bytes = this.interim.get(choice.coding);
    return bytes && (bytes.length < this.body.length || !choice.identityAcceptable) ? { coding: choice.coding, bytes } : this.identity;
  }

  private prepare(coding: ContentCoding): void {
    if (this.started.has(coding)) return;
    this.started.add(coding);
    compressAsync(coding, this.body).then(
      (bytes) => {
        if (bytes.length >= this.body.length) return;
        this.ready.set(coding, bytes);
        this.interim.delete(coding);
      },
      (err: unknown) => codecFailed(coding, err), // the interim form (or the body) is sent instead
    );
  }
}
