import { createHash } from 'node:crypto';

/** A file's size and SHA-256 (lower-case hex): what a run manifest records and what an object's metadata holds. */
export interface ContentDigest {
  readonly bytes: number;
  readonly sha256: string;
}

export function sha256Hex(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * Wraps a chunk source that is read once or twice (compared with the file there, then written): each pass is
 * hashed as it goes, and `digest` is that of the last pass read to its end. The bytes are hashed where they already
 * pass, not read again.
 */
export class DigestingChunks {
  private last: ContentDigest | undefined;

  constructor(private readonly source: () => Iterable<string | Uint8Array>) {}

  /** The digest of the bytes, once a pass has read them all. */
  get digest(): ContentDigest | undefined {
    return this.last;
  }

  readonly chunks = (): Iterable<string | Uint8Array> => this.pass();

  private *pass(): Generator<string | Uint8Array> {
    const hash = createHash('sha256');
    let bytes = 0;
    for (const chunk of this.source()) {
      if (typeof chunk === 'string') {
        hash.update(chunk, 'utf8');
        bytes += Buffer.byteLength(chunk, 'utf8');
      } else {
        hash.update(chunk);
        bytes += chunk.byteLength;
      }
      yield chunk;
    }
    this.last = { bytes, sha256: hash.digest('hex') };
  }
}
