/** Results a unit (a metric's day, or a store's) may have unless `--max-results` says more: a plausible day. */
export const DEFAULT_MAX_RESULTS = 1_000_000;
/**
 * The most bytes one result may take in a page body: a store's day with hundreds of zones is a few kilobytes, so a
 * page of n results never needs more than n times this (plus the envelope's).
 */
export const RESULT_BYTES_BOUND = 32 * 1024;
const ENVELOPE_BYTES_BOUND = 64 * 1024;

/** What a unit may take before it fails: pages, and bytes per page body. */
export interface UnitBounds {
  readonly maxResults: number;
  readonly maxPages: number;
  readonly maxPageBytes: number;
}

/**
 * A unit's bounds of its own, whatever the vendor's `count` and `next` say: a page of `pageSize` results at most
 * RESULT_BYTES_BOUND each, and as many pages as `maxResults` takes at the requested size (a server that serves fewer
 * per page than asked runs out of pages before a day that big; `--max-results` raises both).
 */
export function unitBounds(pageSize: number, maxResults: number = DEFAULT_MAX_RESULTS): UnitBounds {
  return {
    maxResults,
    maxPages: Math.max(1, Math.ceil(maxResults / pageSize)),
    maxPageBytes: ENVELOPE_BYTES_BOUND + pageSize * RESULT_BYTES_BOUND,
  };
}
