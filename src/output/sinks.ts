import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { writeFileAtomicIfChanged } from './atomic-file.js';
import { DigestingChunks, type ContentDigest } from './content-hash.js';
import { extensionOf, jsonOrUndefined, type OutputEncoding } from './format.js';
import { UnitPaths, type Layout } from './layout.js';
import type * as ParquetModule from './parquet.js';
import type { ParquetTable } from './parquet.js';
import { asOutputError } from './write-failure.js';

/** A record set aside by `--on-invalid skip`, with where and why it broke the data contract. */
export interface SetAsideRecord {
  readonly field: string;
  readonly value: unknown;
  readonly reason: string;
  readonly record: unknown;
}

/** What a sink needs of a complete unit: where it belongs, its encoded text, and the records set aside. */
export interface UnitContent {
  readonly unit: {
    readonly metric: { readonly name: string };
    readonly day: string;
    readonly storeCode?: string;
  };
  /** Written once at the top of a file, and once for a whole stream. */
  readonly header: string | undefined;
  /** UTF-8 bytes, in output order. */
  readonly pieces: readonly Uint8Array[];
  /** With `-f parquet`: the columns' types and the file's metadata; the pieces are then its rows as JSON lines. */
  readonly table?: ParquetTable | undefined;
  readonly rejected: readonly SetAsideRecord[];
  /** Its rows, for a sink that records them. */
  readonly rowCount?: number;
}

/** A unit's data file as a run manifest records it: where under the output, its size and SHA-256. */
export interface StoredFile extends ContentDigest {
  /** Relative to the output folder or bucket prefix, `/`-separated. */
  readonly path: string;
}

/** What committing a unit did. */
export interface UnitWrite {
  /** False when the output already held these bytes and was left untouched. */
  readonly changed: boolean;
  /** The file, for sinks that write files. */
  readonly path?: string;
  /** The data file as stored (written or found unchanged), for sinks that write files or objects. */
  readonly file?: StoredFile;
}

/**
 * Where a complete unit goes. `commit` is called once per unit, only for complete units: in plan order, one at a time,
 * unless the destination's capabilities say it commits ahead (each unit as soon as it is fetched).
 */
export interface UnitSink {
  commit(data: UnitContent, signal?: AbortSignal): Promise<UnitWrite>;
  /** Human description of where the unit went, for the log. */
  describe(data: UnitContent): string;
}

/** Encoded pieces are handed to the writer in chunks of about this many bytes. */
const CHUNK_BYTES = 256 * 1024;

/** A unit's bytes: the header when `withHeader`, then its results' pieces in order, in writer-sized chunks. */
export function* unitChunks(data: UnitContent, withHeader: boolean): Generator<string | Buffer> {
  if (withHeader && data.header !== undefined) yield data.header;
  let chunk: Uint8Array[] = [];
  let size = 0;
  for (const piece of data.pieces) {
    chunk.push(piece);
    size += piece.length;
    if (size >= CHUNK_BYTES) {
      yield Buffer.concat(chunk, size);
      chunk = [];
      size = 0;
    }
  }
  if (chunk.length > 0) yield Buffer.concat(chunk, size);
}

export { unitFileName } from './layout.js';

/** The NDJSON lines of a unit's set-aside records, each with its metric, day, field, value and reason. */
export function rejectedLines(data: UnitContent): string[] {
  return data.rejected.map((rejected) => {
    const line = {
      metric: data.unit.metric.name,
      day: data.unit.day,
      field: rejected.field,
      value: rejected.value ?? null,
      reason: rejected.reason,
      record: rejected.record,
    };
    // A record nested deeper than JSON.stringify can go is kept as a note rather than failing the unit.
    return `${jsonOrUndefined(line) ?? JSON.stringify({ ...line, value: null, record: '(nested too deeply to keep)' })}\n`;
  });
}

/**
 * The Parquet writer (hyparquet-writer and hyparquet, about fifty modules), loaded by the first Parquet unit: a run
 * writing CSV or NDJSON never pays for loading it.
 */
const parquetWriter: { module: typeof ParquetModule | undefined } = { module: undefined };

/** Loads the Parquet writer when the encoding needs it; `unitFileChunks` expects it loaded. */
export async function loadWriterOf(encoding: OutputEncoding): Promise<void> {
  if (extensionOf(encoding) === 'parquet') parquetWriter.module ??= await import('./parquet.js');
}

/**
 * A unit's whole file as it is stored, in a folder or a bucket: its text, or with `-f parquet` its Parquet file
 * (after `loadWriterOf`).
 */
export function unitFileChunks(data: UnitContent, encoding: OutputEncoding): Iterable<string | Uint8Array> {
  if (extensionOf(encoding) !== 'parquet') return unitChunks(data, true);
  if (data.table === undefined) throw new Error(`no Parquet table for ${data.unit.metric.name} ${data.unit.day}`);
  if (parquetWriter.module === undefined) throw new Error('the Parquet writer is not loaded (loadWriterOf)');
  return parquetWriter.module.parquetFileChunks(data.table, data.pieces);
}

/**
 * `<output>/<metric>/<day>.<ext>` (or the hive layout's path), written atomically; rejected records to the same path
 * under `<output>/_rejected/`, as NDJSON.
 */
export class FileSink implements UnitSink {
  private readonly paths: UnitPaths;

  constructor(
    private readonly outputDir: string,
    private readonly encoding: OutputEncoding,
    layout: Layout = 'flat',
  ) {
    this.paths = new UnitPaths(extensionOf(encoding), layout);
  }

  pathOf(data: Pick<UnitContent, 'unit'>): string {
    return join(this.outputDir, this.paths.dataOf(data.unit));
  }

  async commit(data: UnitContent, signal?: AbortSignal): Promise<UnitWrite> {
    await loadWriterOf(this.encoding);
    const path = this.pathOf(data);
    const content = new DigestingChunks(() => unitFileChunks(data, this.encoding));
    const changed = await writeFileAtomicIfChanged(path, content.chunks, signal);
    const file = content.digest && { path: this.paths.dataOf(data.unit), ...content.digest };
    const written = { changed, path, ...(file ? { file } : {}) };
    const rejected = join(this.outputDir, this.paths.rejectedOf(data.unit));
    if (data.rejected.length === 0) {
      // A re-run that finds the data clean removes what an earlier run set aside, so the folder tells the truth.
      try {
        await rm(rejected, { force: true });
      } catch (error) {
        throw asOutputError(error, `cannot remove ${rejected}`);
      }
      return written;
    }
    await writeFileAtomicIfChanged(rejected, () => rejectedLines(data), signal);
    return written;
  }

  describe(data: UnitContent): string {
    return this.pathOf(data);
  }
}

/** `-o -`: each unit's lines once the unit is complete; a CSV header only once for the whole stream. */
export class StreamSink implements UnitSink {
  private headerWritten = false;

  constructor(private readonly stream: Writable) {}

  async commit(data: UnitContent): Promise<UnitWrite> {
    for (const chunk of unitChunks(data, !this.headerWritten)) await this.write(chunk);
    this.headerWritten = true;
    return { changed: true };
  }

  describe(): string {
    return 'stdout';
  }

  private write(chunk: string | Buffer): Promise<void> {
    // Honour backpressure: a slow reader (`| jq`) slows us down instead of growing memory.
    // A closed pipe (`| head`, EPIPE) stays as it is, not an output failure: the process edge ends the run quietly.
    return new Promise((resolve, reject) => {
      this.stream.write(chunk, (error) => (error ? reject(asOutputError(error, 'cannot write to stdout')) : resolve()));
    });
  }
}

/**
 * A unit without results writes no file: a header-only file would read as "zero visitors" to a loader, and the file
 * of an earlier import of that day (a look-back while the vendor republishes) stays as it was.
 */
export function withoutEmptyUnits(sink: UnitSink): UnitSink {
  // A complete unit's results are its pieces plus the records set aside.
  const empty = (data: UnitContent): boolean => data.pieces.length === 0 && data.rejected.length === 0;
  return {
    commit: (data, signal) => (empty(data) ? Promise.resolve({ changed: false }) : sink.commit(data, signal)),
    describe: (data) => (empty(data) ? 'nothing written (no results)' : sink.describe(data)),
  };
}
