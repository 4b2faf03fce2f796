import { silentLogger, type Logger } from '../log/logger.js';
import { VendorDownError } from './outage.js';
import type { Window } from './send-log.js';

/** The longest wait a vendor's answer may impose (`--max-wait`), by default. */
export const DEFAULT_MAX_WAIT_MS = 120_000;
/** No pace is slower than this many requests a second, whatever the vendor announces or `--max-rps` says. */
export const PACE_FLOOR_RPS = 0.1;

/** `120 s`, `0.5 s`: a wait as a log line says it. */
export function describeSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) || seconds >= 10 ? Math.round(seconds) : seconds.toFixed(1)} s`;
}

/**
 * A quota per window bounded by the run's cap on waits and the pace floor: a window longer than the cap is cut to it
 * at the same rate (the quota scaled down, at least 1), and a pace slower than the floor is raised to it. So no
 * window the pacer waits out is longer than the cap or than one request at the floor.
 */
export function boundedWindow<W extends Window>(pace: W, maxWaitMs: number): W {
  let { quota, windowMs } = pace;
  if (!(quota >= 1)) quota = 1;
  if (!(windowMs > 0)) windowMs = 1000;
  if (windowMs > maxWaitMs) {
    const scaled = Math.max(1, Math.floor((quota * maxWaitMs) / windowMs));
    windowMs = (windowMs * scaled) / quota;
    quota = scaled;
  }
  windowMs = Math.min(windowMs, (quota * 1000) / PACE_FLOOR_RPS);
  return { ...pace, quota, windowMs };
}

/**
 * The run's one cap on the waits a vendor asks for (Retry-After, a budget's reset). A wait beyond the cap is cut to
 * it once, with a warning; a vendor that asks for more than the cap again, on a request sent after the first such
 * answer, is down for this run: the call gets the VendorDownError that ends it (exit 4, the units left pending).
 */
export class WaitCap {
  /** When the first answer asking beyond the cap came; answers to requests sent before it belong to it. */
  private firstAskAt: number | undefined;

  constructor(
    readonly maxWaitMs: number = DEFAULT_MAX_WAIT_MS,
    private readonly logger: Logger = silentLogger,
  ) {}

  /** `ms`, at most the cap. */
  cap(ms: number): number {
    return Math.min(ms, this.maxWaitMs);
  }

  /**
   * An answer to a request sent at `sentAt` asks every request to wait `askedMs` (`why`: which header said so).
   * Undefined when the wait is within the cap, or this is the first ask beyond it; else the error that ends the run.
   */
  asked(askedMs: number, sentAt: number, now: number, why: string): VendorDownError | undefined {
    if (askedMs <= this.maxWaitMs) return undefined;
    const asked = `${why} asks to wait ${describeSeconds(askedMs)}, more than --max-wait ${describeSeconds(this.maxWaitMs)}`;
    if (this.firstAskAt === undefined) {
      this.firstAskAt = now;
      this.logger.warn(`${asked}: waiting ${describeSeconds(this.maxWaitMs)}; if it asks again, the run ends`);
      return undefined;
    }
    if (sentAt <= this.firstAskAt) return undefined;
    return new VendorDownError(
      `the API is not serving this run: ${asked}, again after waiting ${describeSeconds(this.maxWaitMs)}; ` +
        'the days not fetched stay pending: try again later (--catch-up), or raise --max-wait',
    );
  }
}
