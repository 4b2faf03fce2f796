import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { UnitData } from '../metrics/unit.js';
import { writeFileAtomic } from './atomic-file.js';
import { headerOf, type OutputEncoding } from './format.js';

/** Where a complete unit goes. `commit` is called once per unit, in plan order, only for complete units. */
export interface UnitSink {
  commit(data: UnitData, signal?: AbortSignal): Promise<void>;
  /** Human description of where the unit went, for the log. */
  describe(data: UnitData): string;
}

/** Already encoded pieces are handed to the writer in chunks of about this many bytes. */
const ENCODED_CHUNK_BYTES = 256 * 1024;

function* joined(pieces: readonly Uint8Array[]): Generator<Buffer> {
  let chunk: Uint8Array[] = [];
  let size = 0;
  for (const piece of pieces) {
    chunk.push(piece);
    size += piece.length;
    if (size >= ENCODED_CHUNK_BYTES) {
      yield Buffer.concat(chunk, size);
      chunk = [];
      size = 0;
    }
  }
  if (chunk.length > 0) yield Buffer.concat(chunk, size);
}

/** A unit's bytes: the CSV header when `withHeader`, then its results' pieces in order, in writer-sized chunks. */
function* unitChunks(data: UnitData, encoding: OutputEncoding, withHeader: boolean): Generator<string | Buffer> {
  const header = withHeader ? headerOf(data.unit.metric, encoding) : undefined;
  if (header !== undefined) yield header;
  yield* joined(data.pieces);
}

/** `<day>.csv`, or `<day>.store-<S>.csv` for a `--store` unit (the code URL-encoded, so it is always a file name). */
export function unitFileName(data: Pick<UnitData, 'unit'>, extension: string): string {
  const { day, storeCode } = data.unit;
  return storeCode === undefined ? `${day}.${extension}` : `${day}.store-${encodeURIComponent(storeCode)}.${extension}`;
}

/** `<output>/<metric>/<day>.<ext>`, written atomically; rejected records to `<output>/_rejected/<metric>/<day>.ndjson`. */
export class FileSink implements UnitSink {
  constructor(
    private readonly outputDir: string,
    private readonly encoding: OutputEncoding,
  ) {}

  pathOf(data: Pick<UnitData, 'unit'>): string {
    const extension = this.encoding.shape === 'results' ? 'ndjson' : this.encoding.format;
    return join(this.outputDir, data.unit.metric.name, unitFileName(data, extension));
  }

  rejectedPathOf(data: Pick<UnitData, 'unit'>): string {
    return join(this.outputDir, '_rejected', data.unit.metric.name, unitFileName(data, 'ndjson'));
  }

  async commit(data: UnitData, signal?: AbortSignal): Promise<void> {
    const { metric } = data.unit;
    await writeFileAtomic(this.pathOf(data), unitChunks(data, this.encoding, true), signal);
    const rejectedPath = this.rejectedPathOf(data);
    if (data.rejected.length === 0) {
      // A re-run that finds the data clean removes what an earlier run set aside, so the folder tells the truth.
      await rm(rejectedPath, { force: true });
      return;
    }
    const lines = data.rejected.map(
      (rejected) =>
        `${JSON.stringify({ metric: metric.name, day: data.unit.day, field: rejected.field, value: rejected.value ?? null, reason: rejected.reason, record: rejected.record })}\n`,
    );
    await writeFileAtomic(rejectedPath, lines, signal);
  }

  describe(data: UnitData): string {
    return this.pathOf(data);
  }
}

/** `-o -`: each unit's lines once the unit is complete; a CSV header only once for the whole stream. */
export class StreamSink implements UnitSink {
  private headerWritten = false;

  constructor(
    private readonly stream: Writable,
    private readonly encoding: OutputEncoding,
  ) {}

  async commit(data: UnitData): Promise<void> {
    for (const chunk of unitChunks(data, this.encoding, !this.headerWritten)) await this.write(chunk);
    this.headerWritten = true;
  }

  describe(): string {
    return 'stdout';
  }

  private write(chunk: string | Buffer): Promise<void> {
    // Honour backpressure: a slow reader (`| jq`) slows us down instead of growing memory.
    return new Promise((resolve, reject) => {
      this.stream.write(chunk, (error) => (error ? reject(error) : resolve()));
    });
  }
}
