import { sha256Hex } from './content-hash.js';
import { extensionOf, type OutputEncoding } from './format.js';
import { UnitPaths, type Layout } from './layout.js';
import { objectKey, type ObjectLocation } from './object-location.js';
import type { ObjectStore } from './object-store.js';
import { loadWriterOf, rejectedLines, unitFileChunks, type UnitContent, type UnitSink, type UnitWrite } from './sinks.js';

function bytesOf(chunks: Iterable<string | Uint8Array>): Buffer {
  return Buffer.concat([...chunks].map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk)));
}

/**
 * `-o s3://bucket/prefix`: the folder layout as keys under the prefix (`<prefix>/<metric>/<day>.<ext>`, or the hive
 * layout's keys; set-aside records under `<prefix>/_rejected/`). Each unit is one PUT of the whole object, skipped
 * when the object already holds the same bytes; a failed PUT leaves the old object as it was.
 */
export class ObjectSink implements UnitSink {
  private readonly paths: UnitPaths;

  constructor(
    private readonly store: ObjectStore,
    private readonly location: ObjectLocation,
    private readonly encoding: OutputEncoding,
    layout: Layout = 'flat',
  ) {
    this.paths = new UnitPaths(extensionOf(encoding), layout);
  }

  keyOf(data: Pick<UnitContent, 'unit'>): string {
    return objectKey(this.location, this.paths.dataOf(data.unit));
  }

  async commit(data: UnitContent, signal?: AbortSignal): Promise<UnitWrite> {
    await loadWriterOf(this.encoding);
    const key = this.keyOf(data);
    const body = bytesOf(unitFileChunks(data, this.encoding));
    // The hash the object's metadata keeps is the one the run manifest records.
    const sha256 = sha256Hex(body);
    const outcome = await this.store.writeIfChanged(key, body, signal, sha256);
    const rejectedKey = objectKey(this.location, this.paths.rejectedOf(data.unit));
    // A re-run that finds the data clean removes what an earlier run set aside, so the bucket tells the truth.
    if (data.rejected.length === 0) await this.store.removeIfPresent(rejectedKey, signal);
    else await this.store.writeIfChanged(rejectedKey, bytesOf(rejectedLines(data)), signal);
    return {
      changed: outcome === 'written',
      path: this.store.url(key),
      file: { path: this.paths.dataOf(data.unit), bytes: body.length, sha256 },
    };
  }

  describe(data: UnitContent): string {
    return this.store.url(this.keyOf(data));
  }
}
