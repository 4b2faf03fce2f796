/**
 * A complete day's profile as the state keeps it, one short line per day: results, stores, rows, total (the figures
 * the import sums from its units; what they are sums of is the metric's business).
 */
export type DayProfile = readonly [results: number, stores: number, rows: number, total: number];
