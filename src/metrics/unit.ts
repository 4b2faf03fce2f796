import { ContractError, IncompleteError } from '../errors.js';
import type { HttpClient } from '../fetch/http-client.js';
import type { RequestTally } from '../fetch/exchange.js';
import { followPages, PagingAnomaly } from '../fetch/pager.js';
import { firstPageUrl } from '../fetch/urls.js';
import { silentLogger, type Logger } from '../log/logger.js';
import type { OutputEncoding } from '../output/format.js';
import type { ParquetTable } from '../output/parquet.js';
import type { UnitContent } from '../output/sinks.js';
import type { MeasureSums } from './measure.js';
import { storeSumsOf } from './store-sums.js';
import { dayWindow, type DayMode } from '../window/day-mode.js';
import type { CalendarDay } from '../window/days.js';
import { describeValue, describeViolation, type RequestScope } from './check.js';
import { compareResults, type MetricDescriptor } from './descriptors.js';
import { headerOf, parquetTableOf, resultEncoder } from './encode.js';
import { decodePage, type EncodedResult, type PageContext, type RejectedRecord } from './page.js';
import { unitBounds } from './unit-bounds.js';

export type { RejectedRecord } from './page.js';

/** The smallest piece of work that is fetched, checked and written on its own: metric × day × store. */
export interface Unit {
  readonly metric: MetricDescriptor;
  readonly day: CalendarDay;
  /** A UTC day (the default) or a store-local calendar day. */
  readonly mode?: DayMode;
  readonly storeCode?: string;
}

function unitWindow(unit: Unit): { gte: string; lte: string } {
  return dayWindow(unit.day, unit.mode ?? 'utc');
}

export function unitLabel(unit: Unit): string {
  return `${unit.metric.name} ${unit.day}${unit.storeCode === undefined ? '' : ` store ${unit.storeCode}`}`;
}

/** The first page of a unit: its day's window, the store filter when there is one, the page size. */
export function unitFirstPageUrl(unit: Unit, baseUrl: URL, pageSize: number): URL {
  return firstPageUrl(baseUrl, unit.metric.resource, {
    ...unitWindow(unit),
    pageSize,
    ...(unit.storeCode === undefined ? {} : { storeCode: unit.storeCode }),
  });
}

/** A fetched, complete unit: what its sink writes (`UnitContent`), and what the run counts and judges of it. */
export interface UnitData extends UnitContent {
  readonly unit: Unit;
  readonly count: number;
  readonly pages: number;
  readonly rowCount: number;
  /** The CSV header, for the `rows` shape in CSV. */
  readonly header: string | undefined;
  /** With `-f parquet`: the columns' types and the file's metadata. */
  readonly table?: ParquetTable | undefined;
  /** The unit's output as UTF-8, one piece per valid result, in output order (store_code, date; rows by zone). */
  readonly pieces: Uint8Array[];
  readonly rejected: RejectedRecord[];
  readonly warnings: string[];
  /** The distinct store codes of the valid results, sorted: which stores the vendor has published for the unit. */
  readonly storeCodes: readonly string[];
  /** Results of a neighbouring local day, received and counted but not written (local mode). */
  readonly dropped: number;
  /** Fetches of the whole unit it took (1 unless it came back incomplete). */
  readonly attempts: number;
  /** The metric's day total over the results kept, as sums (the units of a day add up). */
  readonly measure: MeasureSums;
  /** The same store by store, in the order of `storeCodes`. */
  readonly storeSums: readonly MeasureSums[];
  /** Requests the unit sent (every fetch, retries included), and the 429s among their answers. */
  readonly requests: number;
  readonly throttled: number;
}

export interface UnitFetchOptions {
  readonly client: HttpClient;
  readonly baseUrl: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly pageSize: number;
  /** `--max-results`: a unit's results at most (default: a plausible day); its pages and page bytes follow from it. */
  readonly maxResults?: number;
  readonly onInvalid: 'fail' | 'skip';
  readonly encoding: OutputEncoding;
  /** Whole-unit fetches before giving up with exit 6: the first and up to 2 more. */
  readonly maxAttempts?: number;
  readonly logger?: Logger;
  readonly onPage?: (unit: Unit, page: number, rowsSoFar: number) => void;
}

type Attempt = { readonly complete: true; readonly data: UnitData } | { readonly complete: false; readonly reason: string };

export async function fetchUnit(unit: Unit, options: UnitFetchOptions): Promise<UnitData> {
  const maxAttempts = options.maxAttempts ?? 3;
  const logger = options.logger ?? silentLogger;
  let reason = '';
  const tally: RequestTally = { requests: 0, throttled: 0 };
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const outcome = await fetchOnce(unit, options, attempt, tally);
    if (outcome.complete) return outcome.data;
    reason = outcome.reason;
    if (attempt < maxAttempts) logger.warn(`${unitLabel(unit)}: ${reason}; fetching the unit again (${attempt + 1}/${maxAttempts})`);
  }
  throw new IncompleteError(
    `${unitLabel(unit)}: incomplete data after ${maxAttempts} fetches: ${reason}; nothing written for this unit, retry later`,
  );
}

async function fetchOnce(unit: Unit, options: UnitFetchOptions, attempt: number, tally: RequestTally): Promise<Attempt> {
  const logger = options.logger ?? silentLogger;
  const context: PageContext = { metric: unit.metric, scope: requestScope(unit), encode: resultEncoder(unit.metric, options.encoding) };
  const results: EncodedResult[] = [];
  const rejected: RejectedRecord[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  let rowCount = 0;
  let dropped = 0;
  let repeated = 0;
  let received = 0;
  let count = 0;
  let pages = 0;
  let rebaseWarned = false;
  const bounds = unitBounds(options.pageSize, options.maxResults);
  try {
    const pager = followPages(unitFirstPageUrl(unit, options.baseUrl, options.pageSize), {
      client: options.client,
      baseUrl: options.baseUrl,
      headers: options.headers,
      parse: (response) => decodePage(response.body, context),
      label: (page) => `${unitLabel(unit)} page ${page}`,
      tally,
      maxPages: {
        pages: bounds.maxPages,
        why: `the most ${bounds.maxResults} results take at --page-size ${options.pageSize} (--max-results)`,
      },
      maxBody: { bytes: bounds.maxPageBytes, what: `the most a page of ${options.pageSize} results takes (--page-size)` },
      onRebase: (from, to) => {
        if (rebaseWarned) return;
        rebaseWarned = true;
        logger.warn(`${unitLabel(unit)}: next link on ${new URL(from).origin} rebased onto ${to.origin} (--base-url)`);
      },
    });
    for await (const { number, content: page } of pager) {
      pages = number;
      if (number === 1) {
        count = page.count;
        if (count > bounds.maxResults) {
          throw new ContractError(
            `${unitLabel(unit)}: the API says the day has ${count} results, more than a unit takes (--max-results ${bounds.maxResults}); ` +
              'nothing written for this unit: raise --max-results if the day really is that big',
          );
        }
      }
      received += page.size;
      for (const key of page.keys) {
        if (seen.has(key)) repeated++;
        else seen.add(key);
      }
      const firstRejected = page.rejected[0];
      if (firstRejected && options.onInvalid === 'fail') throw new ContractError(invalidRecordMessage(unit, firstRejected));
      rejected.push(...page.rejected);
      warnings.push(...page.warnings);
      for (const result of page.results) results.push(result);
      dropped += page.dropped;
      rowCount += page.rowCount;
      options.onPage?.(unit, number, rowCount);
    }
  } catch (error) {
    if (error instanceof PagingAnomaly) return { complete: false, reason: error.message };
    throw error;
  }
  if (received !== count || repeated > 0) {
    const repeats = repeated > 0 ? `, ${repeated} repeated (store_code, date)` : '';
    return { complete: false, reason: `expected ${count} results, received ${received}${repeats}` };
  }
  results.sort(compareResults);
  const stores = storeSumsOf(results);
  const header = headerOf(unit.metric, options.encoding);
  const table = parquetTableOf(unit.metric, options.encoding, unitWindow(unit));
  return {
    complete: true,
    data: {
      unit,
      count,
      pages,
      rowCount,
      header,
      table,
      pieces: results.map((result) => result.bytes),
      rejected,
      warnings,
      storeCodes: stores.codes,
      dropped,
      attempts: attempt,
      measure: stores.total,
      storeSums: stores.sums,
      requests: tally.requests,
      throttled: tally.throttled,
    },
  };
}

/**
 * The instants a unit's results must lie in (its day's window, both ends included), its store, if one was asked for,
 * and in local mode the local day it keeps.
 */
export function requestScope(unit: Unit): RequestScope {
  const { gte, lte } = unitWindow(unit);
  return {
    fromMs: Date.parse(gte),
    toMs: Date.parse(lte),
    label: `${gte}..${lte}`,
    ...(unit.mode === 'local' ? { localDay: unit.day } : {}),
    ...(unit.storeCode === undefined ? {} : { storeCode: unit.storeCode }),
  };
}

function invalidRecordMessage(unit: Unit, rejected: RejectedRecord): string {
  const { store_code: storeCode, date } = (rejected.record ?? {}) as { store_code?: unknown; date?: unknown };
  const where = `store_code ${describeValue(storeCode)}${typeof date === 'string' ? ` date ${date}` : ''}`;
  return (
    `${unitLabel(unit)}: invalid record (${where}): ${describeViolation(rejected)}; ` +
    'rerun with --on-invalid skip to import the valid records and set this one aside'
  );
}
