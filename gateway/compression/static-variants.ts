import { compressAsync, compressedOrUndefined, MIN_COMPRESSED_BYTES, OFFERED } from './codecs';
import { chooseEncoding, type ContentCoding } from './negotiate';

export interface Variant {
  readonly coding: ContentCoding | 'identity';
  readonly bytes: Buffer;
}

/**
 * The compressed forms of a fixed body (the OpenAPI document, the reference page and its assets),
 * each made once, at the smallest level (STATIC_LEVELS), on the thread pool, when first asked for.
 * Until it is ready the body goes uncompressed, so no request waits for a compression of a large
 * file (Swagger UI's bundle takes seconds at brotli 11); a caller that refuses identity gets it
 * compressed at once at the per-request level instead.
 */
export class StaticVariants {
  private readonly ready = new Map<ContentCoding, Buffer>();
  private readonly started = new Set<ContentCoding>();
  private readonly identity: Variant;

  constructor(readonly body: Buffer) {
    this.identity = { coding: 'identity', bytes: body };
  }

  /** The variant to send for this Accept-Encoding. */
  pick(acceptEncoding: string | undefined): Variant {
    const choice = chooseEncoding(acceptEncoding, OFFERED);
    if (choice.coding === 'identity') return this.identity;
    if (this.body.length < MIN_COMPRESSED_BYTES && choice.identityAcceptable) return this.identity;
    const bytes = this.ready.get(choice.coding);
    if (bytes) return { coding: choice.coding, bytes };
    this.prepare(choice.coding);
    if (choice.identityAcceptable) return this.identity;
    const compressed = compressedOrUndefined(choice.coding, this.body);
    return compressed ? { coding: choice.coding, bytes: compressed } : this.identity;
  }

  private prepare(coding: ContentCoding): void {
    if (this.started.has(coding)) return;
    this.started.add(coding);
    compressAsync(coding, this.body).then(
      (bytes) => {
        if (bytes.length < this.body.length) this.ready.set(coding, bytes);
      },
      () => undefined, // stays uncompressed
    );
  }
}
