import { MalformedBodyError } from '../fetch/exchange.js';
import type { MetricDescriptor, MetricResult } from './descriptors.js';
import { checkResult, type RequestScope, type Violation } from './check.js';
import { ByteWriter } from './byte-writer.js';
import type { ResultEncoder } from './encode.js';
import { envelopeSchema, type Envelope } from './schema.js';
import { emptySums, type MeasureSums } from './measure.js';
import { localDayOf } from '../window/day-mode.js';

export interface RejectedRecord extends Violation {
  readonly record: unknown;
}

/** One valid result's output as UTF-8 bytes, and its sort key. */
export interface EncodedResult {
  readonly storeCode: string;
  readonly date: string;
  /** The instant of `date` (the store's local midnight), epoch ms. */
  readonly instant: number;
  readonly bytes: Uint8Array;
  /** What it adds to its store's day total. */
  readonly sums: MeasureSums;
}

/** One page, checked and encoded. */
export interface DecodedPage {
  readonly count: number;
  readonly next: string | null;
  /** Results on the page, valid or not. */
  readonly size: number;
  /** (store_code, instant) of every valid result, for the unit's repeat check; records set aside are not in it. */
  readonly keys: string[];
  readonly results: EncodedResult[];
  /** Valid results of a neighbouring local day (local mode): received, in the repeat check, not written. */
  readonly dropped: number;
  readonly rowCount: number;
  readonly rejected: RejectedRecord[];
  /** The metric's warnings about valid results (e.g. traffic not summing to 1), naming the store and date. */
  readonly warnings: string[];
}

/** What decoding a page of one unit needs besides the body. */
export interface PageContext {
  readonly metric: MetricDescriptor;
  readonly scope: RequestScope;
  readonly encode: ResultEncoder;
}

/** A body that is not UTF-8 is not the API's: decoding stops at the first bad byte rather than guessing (U+FFFD). */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads a 2xx body as an envelope; anything else is a malformed body (retried, then exit 5). */
function parseEnvelope(body: Uint8Array): Envelope {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new MalformedBodyError(`not UTF-8 text (${body.length} bytes)`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
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
 * Parses one page body, checks the envelope and every result against the metric's contract and the request, and
 * encodes each valid result's rows. Synchronous and bounded by the body: JSON.parse does not recurse, and nothing
 * below walks a record deeper than its known fields, except JSON.stringify, which is guarded.
 */
export function decodePage(body: Uint8Array, context: PageContext): DecodedPage {
  const { metric, scope, encode } = context;
  const envelope = parseEnvelope(body);
  const keys: string[] = [];
  const writer = new ByteWriter();
  const ends: number[] = [];
  const valid: { result: MetricResult; instant: number; sums: MeasureSums }[] = [];
  const rejected: RejectedRecord[] = [];
  const warnings: string[] = [];
  let rowCount = 0;
  let dropped = 0;
  for (const record of envelope.results) {
    const check = checkResult(metric, record, scope);
    if (!check.ok) {
      rejected.push({ ...check.violation, record });
      continue;
    }
    const { result, instant } = check;
    if (scope.localDay !== undefined && localDayOf(result.date) !== scope.localDay) {
      // A neighbouring local day inside the window: it belongs to that day's file.
      keys.push(`${result.store_code}\u0000${instant}`);
      dropped++;
      continue;
    }
    if (encode.writeTo !== undefined) {
      encode.writeTo(result, writer);
    } else {
      const text = encode(result);
      if (text === undefined) throw new MalformedBodyError(`a result of store ${result.store_code} is nested too deeply to write`);
      writer.write(text);
    }
    keys.push(`${result.store_code}\u0000${instant}`);
    ends.push(writer.length);
    rowCount += result.values.length;
    // Each result its own sums: its store's day is judged on its own, once the unit's results are sorted by store.
    const sums = emptySums();
    metric.total.add(sums, result);
    valid.push({ result, instant, sums });
    const warning = metric.warningOf?.(result);
    if (warning) warnings.push(`store ${result.store_code} ${result.date}: ${warning}`);
  }
  const output = writer.take();
  const results = valid.map(
    ({ result, instant, sums }, index): EncodedResult => ({
      storeCode: result.store_code,
      date: result.date,
      instant,
      bytes: output.subarray(ends[index - 1] ?? 0, ends[index]),
      sums,
    }),
  );
  return {
    count: envelope.count,
    next: envelope.next,
    size: envelope.results.length,
    keys,
    results,
    dropped,
    rowCount,
    rejected,
    warnings,
  };
}
