import { createHash } from 'node:crypto';
import type { ParquetTable } from '../../output/parquet.js';
import type { UnitContent } from '../../output/sinks.js';

/** COPY's text format escapes these; a field's other characters go as they are. */
const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyField(text: string): string {
  return text.replace(COPY_SPECIAL, (char) => COPY_ESCAPES[char] ?? char);
}

/** Lines are handed to COPY in chunks of about this many bytes. */
const CHUNK_BYTES = 256 * 1024;

/**
 * A unit's rows as `COPY ... FROM STDIN` text, one line per row, tab-separated, in output order: made from the typed
 * rows' JSON lines (each result's shared fields, then each row's own, every field the text the CSV writes), so the
 * server types each field from the same text the Parquet writer does.
 */
export function* copyChunks(table: ParquetTable, pieces: Iterable<Uint8Array>): Generator<Buffer> {
  const { sharedColumns } = table;
  let chunk = '';
  for (const piece of pieces) {
    const fields = JSON.parse(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('utf8')) as unknown[];
    let shared = '';
    for (let index = 0; index < sharedColumns; index++) shared += `${copyField(fields[index] as string)}\t`;
    for (const own of fields[sharedColumns] as string[][]) chunk += `${shared}${own.map(copyField).join('\t')}\n`;
    if (chunk.length >= CHUNK_BYTES) {
      yield Buffer.from(chunk, 'utf8');
      chunk = '';
    }
  }
  if (chunk !== '') yield Buffer.from(chunk, 'utf8');
}

export interface UnitDigest {
  readonly sha256: string;
  /** The COPY text's size and lines. */
  readonly bytes: number;
  readonly rows: number;
}

/** What a unit would load, as a digest: its COPY text and its set-aside records. Equal digests, equal rows. */
export function unitDigest(data: UnitContent, table: ParquetTable, rejected: readonly string[]): UnitDigest {
  const hash = createHash('sha256');
  let bytes = 0;
  let rows = 0;
  for (const chunk of copyChunks(table, data.pieces)) {
    hash.update(chunk);
    bytes += chunk.length;
    // A field's own line breaks are escaped: every LF ends a row.
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) rows++;
  }
  // The records set aside count too: a re-run that sets aside other records is a change.
  for (const line of rejected) hash.update(`\u0000${line}`);
  return { sha256: hash.digest('hex'), bytes, rows };
}
