import type { MetricDescriptor } from '../metrics/descriptors.js';
import type { MetricName } from '../metrics/names.js';
import type { SandboxFaults } from './fault-table.js';

/** The emulator serves the metrics the importer knows: one list, `metrics/names.ts`. */
export { METRIC_NAMES, type MetricName } from '../metrics/names.js';

export const DEFAULT_SANDBOX = {
  host: '127.0.0.1',
  port: 0,
  stores: 12,
  zones: 6,
  days: 14,
  seed: 1,
  clientId: 'demo-client',
  clientSecret: 'demo-secret',
  tokenTtlSeconds: 3600,
} as const;

export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 10_000;

/** The fault switches: one table, `fault-table.ts`, their type derived from it. */
export { RATE_LIMIT_HEADERS, type RateLimitHeaders, type SandboxFaults } from './fault-table.js';

/**
 * How the sandbox plays a vendor that publishes late and corrects what it published. A rule names the UTC day whose
 * window holds the results (what an importer asks for), and optionally some stores of it.
 */
export interface SandboxPublishing {
  /** Not published yet: these windows (or these stores of them) answer without those results. */
  hidden?: { day: string; stores?: string[] }[];
  /** Published, then corrected: these results carry other (valid) values; a higher revision, other values again. */
  corrected?: { day: string; stores?: string[]; revision: number }[];
  /**
   * Published wrong, as a batch run on bad input: these results' values (of every metric, or of these) scaled by
   * `factor` (0: every value zero), still valid. Removing the rule is the vendor's correction.
   */
  distorted?: { day: string; stores?: string[]; metrics?: MetricName[]; factor: number }[];
}

export interface SandboxOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Default 12. */
  stores?: number;
  /** Most zones a store has (each store has between ceil(zones/2) and zones). Default 6. */
  zones?: number;
  /** UTC days covered, ending yesterday (UTC): the local midnights they hold. Default 14. */
  days?: number;
  /** Default 1. */
  seed?: number;
  /** Default 'demo-client'. */
  clientId?: string;
  /** Default 'demo-secret'. */
  clientSecret?: string;
  /** `expires_in` and JWT lifetime of issued tokens. Default 3600. */
  tokenTtlSeconds?: number;
  /** HS256 key of issued tokens. Default: random per start (read it back from `Sandbox.tokenSigningKey`). */
  tokenSigningKey?: string;
  faults?: SandboxFaults;
  publishing?: SandboxPublishing;
  /** The metrics it serves, each made up from its descriptor; default: every metric the tool knows. */
  metrics?: readonly MetricDescriptor[];
  /**
   * The sandbox's clock (default the real one): which days exist ("yesterday") and which local days have ended are
   * decided by it, on every request. Token `iat`/`exp` always use the real clock.
   */
  now?: () => Date;
  /**
   * Serve a store's local day while it is still running, with values that change every hour until it ends. Default
   * false: a local day is served only once it has ended (24 hours after its local midnight), as a real vendor
   * cannot have final figures earlier.
   */
  serveInProgress?: boolean;
  /** The most requests `requests` keeps, the newest (default 5000; 1..1,000,000). */
  requestLogCapacity?: number;
  /** Called once per answered request (e.g. to log it); it must not throw. */
  onRequest?: (request: Readonly<RecordedRequest>) => void;
}

/** A request as the log keeps it (its path and query cut to a few hundred characters). */
export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Query parameters (the last value of a repeated one), of the query's first 512 characters, at most 16. */
  query: Record<string, string>;
  /** 0 while the answer is still pending (e.g. during injected latency). */
  status: number;
  /** The request passed the endpoint's access check (Basic credentials, client credentials, or loopback for admin). */
  authorized: boolean;
}

/** How many requests the sandbox received, and how many it keeps. */
export interface RequestCounts {
  /** Every request since start, unrouted ones included. */
  readonly received: number;
  /** Requests to no route (the router's 404 and 405): counted, not kept. */
  readonly unrouted: number;
  /** The most requests the log keeps: the newest ones. */
  readonly capacity: number;
}

export interface ResultWindow {
  gte: string;
  lte: string;
  storeCode?: string;
}

export interface Sandbox {
  /** Base URL, e.g. http://127.0.0.1:45678 (API under /api/bi/area-metrics/...). */
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The HS256 key that signs issued tokens. */
  readonly tokenSigningKey: string;
  /**
   * The newest requests received (metric, token and admin; at most `requestLogCapacity`), oldest first; requests to
   * no route are only counted (`requestCounts`). A copy on each read, of the live records.
   */
  readonly requests: readonly RecordedRequest[];
  /** Requests received since start, those to no route, and the most the log keeps. */
  requestCounts(): RequestCounts;
  /** POST /oauth2/token calls received so far. */
  tokenRequests(): number;
  /** The currently active faults. */
  faults(): SandboxFaults;
  /** Replaces the active faults and restarts their request counting. */
  setFaults(faults: SandboxFaults): void;
  /** The active publishing rules. */
  publishing(): SandboxPublishing;
  /** Replaces the publishing rules (`{}`: everything published, as first published). */
  setPublishing(publishing: SandboxPublishing): void;
  /**
   * The sandbox's own results for a window, exactly as it serves them at its `now` over all pages (unsorted order),
   * without the effect of fault switches (but with the publishing rules and the end of local days: they are the data).
   */
  results(metric: string, window: ResultWindow): unknown[];
  close(): Promise<void>;
}
