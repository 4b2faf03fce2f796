import { MalformedBodyError } from '../fetch/http-client.js';
import { resultEncoder, type OutputEncoding, type ResultEncoder } from '../output/format.js';
import { METRICS, type MetricName } from './descriptors.js';
import { envelopeSchema } from './schema.js';
import { resultKey, validateResult, type Violation } from './validate.js';

/** What a page decoder needs to know besides the body: plain data, so that it can cross to a worker thread. */
export interface PageJob {
  readonly metric: MetricName;
  readonly encoding: OutputEncoding;
}

export interface RejectedRecord extends Violation {
  readonly record: unknown;
}

/**
 * One page, checked and encoded: the paging fields, the identity of every result (for the unit's duplicate check),
 * and the valid results' output text as UTF-8 bytes back to back, with each piece's end offset and sort key.
 * Plain data and one byte array, so that a worker thread can hand it over without copying the bytes.
 */
export interface DecodedPage {
  readonly count: number;
  readonly next: string | null;
  /** Results on the page, valid or not. */
  readonly size: number;
  /** `resultKey` of every result on the page, rejected ones too. */
  readonly keys: string[];
  readonly output: Uint8Array;
  /** Piece i of `output` is [pieceEnds[i - 1] ?? 0, pieceEnds[i]): the rows of one valid result. */
  readonly pieceEnds: number[];
  readonly pieceStoreCodes: string[];
  readonly pieceDates: string[];
  readonly rowCount: number;
  readonly rejected: RejectedRecord[];
  /** The metric's warnings about valid results (e.g. traffic not summing to 1), naming the store and date. */
  readonly warnings: string[];
}

const encoders = new Map<string, ResultEncoder>();

function encoderFor(encoding: OutputEncoding): ResultEncoder {
  const key = `${encoding.format}/${encoding.shape}`;
  let encoder = encoders.get(key);
  if (encoder === undefined) {
    encoder = resultEncoder(encoding);
    encoders.set(key, encoder);
  }
  return encoder;
}

/**
 * UTF-8 output of one page. Texts are written into one scratch buffer that this thread keeps for the next page
 * (growing it by doubling when a page needs more), and `take` copies out exactly what was written: big temporary
 * ArrayBuffers per page would pile up as external memory until the garbage collector gets to them.
 */
let scratch = Buffer.allocUnsafeSlow(1 << 20);

class ByteWriter {
  length = 0;

  write(text: string): void {
    // byteLength first: it also flattens the concatenated text, after which write() copies it in one pass.
    const size = Buffer.byteLength(text);
    if (scratch.length - this.length < size) {
      const grown = Buffer.allocUnsafeSlow(Math.max(scratch.length * 2, this.length + size));
      scratch.copy(grown, 0, 0, this.length);
      scratch = grown;
    }
    this.length += scratch.write(text, this.length, size);
  }

  /** Exactly the bytes written, in an ArrayBuffer of their own (so it can be transferred whole). */
  take(): Uint8Array {
    const exact = new Uint8Array(this.length);
    exact.set(scratch.subarray(0, this.length));
    return exact;
  }
}

/** Reads a 2xx body as an envelope; anything else is a malformed body (retried, then exit 5). */
function parseEnvelope(body: Uint8Array) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new MalformedBodyError(`not valid JSON (${body.length} bytes)`);
  }
  const envelope = envelopeSchema.safeParse(parsed);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    throw new MalformedBodyError(`not a paginated envelope: ${issue?.path.join('.') || 'body'} ${issue?.message ?? ''}`.trim());
  }
  return envelope.data;
}

/**
 * Parses one page body, checks the envelope and every result against the metric's contract (SPEC 2.5), and encodes
 * each valid result's rows. Pure and synchronous: it runs on the main thread or in a worker thread alike.
 */
export function decodePage(body: Uint8Array, job: PageJob): DecodedPage {
  const metric = METRICS[job.metric];
  const encode = encoderFor(job.encoding);
  const envelope = parseEnvelope(body);
  const writer = new ByteWriter();
  const keys: string[] = [];
  const pieceEnds: number[] = [];
  const pieceStoreCodes: string[] = [];
  const pieceDates: string[] = [];
  const rejected: RejectedRecord[] = [];
  const warnings: string[] = [];
  let rowCount = 0;
  for (const record of envelope.results) {
    keys.push(resultKey(record));
    const validation = validateResult(metric, record);
    if (!validation.ok) {
      rejected.push({ ...validation.violation, record });
      continue;
    }
    const { result } = validation;
    writer.write(encode(metric, result, record));
    pieceEnds.push(writer.length);
    pieceStoreCodes.push(result.store_code);
    pieceDates.push(result.date);
    rowCount += result.values.length;
    const warning = metric.warningOf?.(result);
    if (warning) warnings.push(`store ${result.store_code} ${result.date}: ${warning}`);
  }
  return {
    count: envelope.count,
    next: envelope.next,
    size: envelope.results.length,
    keys,
    output: writer.take(),
    pieceEnds,
    pieceStoreCodes,
    pieceDates,
    rowCount,
    rejected,
    warnings,
  };
}
