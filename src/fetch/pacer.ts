import { silentLogger, type Logger } from '../log/logger.js';
import { signalled, systemClock, unlessAborted, type Clock } from './clock.js';
import { OutageGate, type CallId, type VendorDownError } from './outage.js';
import { announcedLimit, type AnnouncedLimit } from './rate-limit-headers.js';
import { SendLog, SLACK, type Send, type Window } from './send-log.js';
import { SlowStart } from './slow-start.js';
import { boundedWindow, DEFAULT_MAX_WAIT_MS, WaitCap } from './wait-cap.js';

/**
 * A learned pace tries more requests per window after this many windows without a 429. A probe the vendor refuses
 * costs a 429 and its Retry-After (a window or more) for every request, so each refused probe doubles the wait before
 * the next one, up to MAX_PROBE_AFTER_WINDOWS: a pace learned exactly stays put, one learned from an odd 429 still
 * comes back in minutes.
 */
const PROBE_AFTER_WINDOWS = 20;
const MAX_PROBE_AFTER_WINDOWS = 16 * PROBE_AFTER_WINDOWS;
/**
 * The share of a run's requests that may be in flight before any limit is known: all of them may be refused when the
 * vendor's unannounced window fills (the first 429's episode), and the run keeps to at most 2% answered 429, half of
 * it for this learning. A run of 1,710 pages may have 17 in flight from its first answer on; one of 171, one.
 */
export const UNAFRAID_SHARE = 0.01;
/** Sends remembered: the largest quota kept exactly (a larger one is kept as the same rate over a shorter window). */
const LOG_CAPACITY = 10_000;

/** Where a pace comes from: `--max-rps`, the vendor's headers, or what its 429s taught. */
type PaceSource = 'max-rps' | 'announced' | 'learned';

interface Pace extends Window {
  readonly source: PaceSource;
}

export interface PacerOptions {
  readonly clock?: Clock;
  /** `--max-rps`: at most this many requests a second, whatever the vendor says. */
  readonly maxRps?: number;
  /** Each change of pace is logged at debug level (`-v`). */
  readonly logger?: Logger;
  /** `--max-wait`: the longest wait a vendor's answer may impose (a Retry-After, a reset, a window). */
  readonly maxWaitMs?: number;
  /** The units the run will fetch, if it knows: with the pages their first answers announce, the run's size. */
  readonly units?: number;
}

/** What a run's requests met, for its summary line, its JSON lines and the state's last run. */
export interface PacerStats {
  /** Requests sent, retries included. */
  readonly requests: number;
  /** Answers with HTTP 429. */
  readonly throttled: number;
  /** The pace in force at the end, in requests a second; undefined when nothing ever paced the run. */
  readonly paceRps?: number;
}

/** A request let through: handed back with its answer. */
export interface Ticket {
  readonly send: Send;
  /** 1 for the run's first request, and so on. */
  readonly number: number;
}

/** `171 requests, 3 answered 429, pace 9.5/s` for a summary line; the pace only when something paced the run. */
export function describeRequests(stats: PacerStats): string {
  const throttled = stats.throttled ? `, ${stats.throttled} answered 429` : '';
  const pace = stats.paceRps === undefined ? '' : `, pace ${stats.paceRps.toFixed(1)}/s`;
  return `${stats.requests} request${stats.requests === 1 ? '' : 's'}${throttled}${pace}`;
}

/** Requests a second at most (less the requests' round trips, by which each window is kept longer). */
function perSecond(pace: Window): number {
  return pace.quota / ((pace.windowMs * (1 + SLACK)) / 1000);
}

function describe(pace: Window): string {
  return `${pace.quota} request${pace.quota === 1 ? '' : 's'} per ${pace.windowMs / 1000} s (${perSecond(pace).toFixed(1)}/s)`;
}

/** `--max-rps` as a quota per window: 10 is 10 per second, 2.5 is 2 per 0.8 s, 0.5 is 1 per 2 s. */
function capOf(maxRps: number, maxWaitMs: number): Pace {
  const quota = Math.max(1, Math.floor(maxRps));
  return boundedWindow({ quota, windowMs: (quota / maxRps) * 1000, source: 'max-rps' }, maxWaitMs);
}

/**
 * One pace for every request of a run (every unit, every retry, `check` too). A request waits for its turn:
 *
 * - the first request goes alone, so its answer can announce the vendor's limit before a burst is sent; while no
 *   limit is known, the requests in flight grow from the answers (a slow start), not all at once;
 * - a 429 holds every request for its Retry-After, and teaches the pace: the vendor accepted n requests in the window
 *   before it, so the run keeps to n per window from then on (one less on each later 429), and tries one more per
 *   window after ten windows without one;
 * - a limit the vendor announces (`RateLimit-Policy`, `X-RateLimit-Limit`, ...) is kept to before any 429; a budget
 *   announced without a policy (`RateLimit: r=0;t=5`) holds the requests past it until its reset;
 * - `--max-rps` caps it all.
 *
 * Every wait a vendor asks for is cut to `--max-wait` before it reaches a hold or a window (a vendor asking for more
 * twice is down for the run, see WaitCap), and no pace is slower than the floor: one number cannot stall a run.
 *
 * Windows are kept like the vendor's sliding-window throttles count them: at most `quota` requests in any window
 * (stretched by 5%), so bursts are allowed where the window allows them. A vendor that sets no limit never meets a
 * wait here. The run's `OutageGate` lives here too: one object per run holds what the vendor's answers say.
 */
export class Pacer {
  readonly outage = new OutageGate();
  /** What it waits on: an HTTP client sharing the pacer waits on it too. */
  readonly clock: Clock;
  readonly waitCap: WaitCap;
  private readonly logger: Logger;
  private readonly cap: Pace | undefined;
  private policy: Pace | undefined;
  /** No request starts before this instant (a Retry-After, or an announced budget's reset). */
  private holdUntil = -Infinity;
  /** An announced budget without a policy: requests left, until when. */
  private budget: { remaining: number; until: number } | undefined;
  /** The longest reset an `X-RateLimit-*` vendor announced: the length of its window, which it does not say. */
  private announcedWindowSeconds = 0;
  private readonly sends = new SendLog(LOG_CAPACITY);
  private readonly slowStart = new SlowStart();
  private readonly units: number | undefined;
  /** Pages announced by the first answers of units (their `count` over the page size), and by how many units. */
  private readonly announcedPages = { pages: 0, units: 0 };
  private sent = 0;
  private throttledAnswers = 0;
  /** When the latest 429 of a new episode arrived; 429s of requests sent before it belong to that episode. */
  private episodeAt = -Infinity;
  /**
   * The first 429 with no pace yet: what it teaches is counted once every request sent before it is over (the ones
   * in flight may be 429s too, or accepted ones that overtook it).
   */
  private lesson: { readonly windowMs: number; readonly refusedAt: number; readonly held: string; unfinished: number } | undefined;
  /** When a learned pace last changed, and whether a request has waited on it since (only then is it worth probing). */
  private learnedAt = -Infinity;
  private waitedOnPolicy = false;
  /** Requests a probe adds to the window: doubled by each probe that met no 429, back to 1 at a 429. */
  private probeStep = 1;
  /** Windows without a 429 before the next probe: doubled by each probe the vendor refused. */
  private probeAfterWindows = PROBE_AFTER_WINDOWS;
  /** The quota before the latest probe, while that probe is the latest change of pace: a 429 now refuses the probe. */
  private probedFrom: number | undefined;
  private readonly firstAnswer = signalled();
  /** The first request has been let go (its answer, not yet in, tells whether the vendor announces a limit). */
  private firstOut = false;
  private firstAnswered = false;
  /** Resolved at each answer: a window opened by a request in flight is known once it is answered. */
  private nextAnswer = signalled();

  constructor(options: PacerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.waitCap = new WaitCap(options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS, this.logger);
    this.cap = options.maxRps === undefined ? undefined : capOf(options.maxRps, this.waitCap.maxWaitMs);
    this.units = options.units;
    if (this.cap) this.slowStart.end();
    if (this.cap)
      this.logger.debug(`pace: at most ${describe(this.cap)} (--max-rps)`, {
        pace_rps: Number(perSecond(this.cap).toFixed(2)),
        source: 'max-rps',
      });
  }

  /**
   * Waits for the turn of a request of `call` (see OutageGate); rejects with the signal's reason when it aborts, and
   * with the VendorDownError once the vendor is found down.
   */
  async acquire(call: CallId, signal?: AbortSignal): Promise<Ticket> {
    if (this.firstOut && !this.firstAnswered) await unlessAborted(this.firstAnswer.promise, signal);
    this.firstOut = true;
    for (;;) {
      await this.outage.admit(call, signal);
      const now = this.clock.now();
      const at = this.earliest(now);
      if (at <= now) return this.grant(now);
      if (at === Infinity) await unlessAborted(this.nextAnswer.promise, signal);
      else await this.clock.sleep(at - now, signal);
    }
  }

  /** A request let through that the run's halt or an interrupt aborted before its answer: not counted as sent. */
  withdrawn(ticket: Ticket): void {
    this.sent--;
    this.answered(ticket);
  }

  /** The head of the vendor's answer arrived (before its body): the vendor has counted the request by now. */
  heard(ticket: Ticket): void {
    ticket.send.answeredAt ??= this.clock.now();
  }

  /**
   * The vendor's answer to a request, read whole (none: it failed on the network or timed out); its headers may
   * announce a limit. Once per request, after `throttled` if it was a 429. Returns the error that ends the run when
   * the answer asks again for a wait beyond the cap.
   */
  answered(ticket: Ticket, headers?: Headers): VendorDownError | undefined {
    this.heard(ticket);
    if (!ticket.send.over) this.slowStart.over(!ticket.send.throttled);
    ticket.send.over = true;
    if (this.lesson && ticket.send.at <= this.episodeAt && --this.lesson.unfinished === 0) this.learnFromEpisode(this.lesson);
    this.nextAnswer.resolve();
    this.nextAnswer = signalled();
    if (!this.firstAnswered) {
      this.firstAnswered = true;
      this.firstAnswer.resolve();
    }
    const announced = headers === undefined ? undefined : announcedLimit(headers, this.clock.now());
    return announced === undefined ? undefined : this.follow(announced, ticket);
  }

  /**
   * A unit's first answer says it has `pages` pages. With the run's units, the units seen so far tell the run's size,
   * and a share of it may be in flight before any limit is known (the slow start lets the rest grow from answers).
   */
  unitPages(pages: number): void {
    if (this.units === undefined || !(pages >= 1)) return;
    this.announcedPages.pages += pages;
    this.announcedPages.units++;
    const runRequests = (this.units * this.announcedPages.pages) / this.announcedPages.units;
    this.slowStart.allow(Math.floor(UNAFRAID_SHARE * runRequests));
  }

  /** Every request waits `waitMs` (already capped): a 429's or a 5xx's Retry-After holds the whole run, not one call. */
  hold(waitMs: number): void {
    this.holdUntil = Math.max(this.holdUntil, this.clock.now() + waitMs);
  }

  /**
   * The answer to `ticket` asks every request to wait `askedMs` (`why`: which header). Beyond the cap, the second
   * time, the vendor is down for the run: the error is returned, and every call waiting or to come ends with it.
   */
  asked(ticket: Ticket, askedMs: number, why: string): VendorDownError | undefined {
    const down = this.waitCap.asked(askedMs, ticket.send.at, this.clock.now(), why);
    if (down) this.outage.end(down);
    return down;
  }

  /**
   * A 429: every request waits `waitMs` (its Retry-After, or the retry's backoff when it has none), and the first 429
   * of an episode teaches the pace.
   */
  throttled(ticket: Ticket, waitMs: number, retryAfterMs: number | undefined): void {
    this.throttledAnswers++;
    ticket.send.throttled = true;
    this.slowStart.end();
    const now = this.clock.now();
    this.hold(waitMs);
    if (ticket.send.at <= this.episodeAt) return;
    this.episodeAt = now;
    const held = `every request held ${(waitMs / 1000).toFixed(1)} s`;
    if (this.policy && this.probedFrom !== undefined) {
      // The probe was one too many: back to the quota that held, and the next probe waits twice as long.
      const quota = this.probedFrom;
      this.probeAfterWindows = Math.min(MAX_PROBE_AFTER_WINDOWS, this.probeAfterWindows * 2);
      this.learn({ ...this.policy, quota }, now, `HTTP 429 after a probe; ${held}; next probe after ${this.probeAfterWindows} windows`);
      return;
    }
    if (this.policy) {
      // Paced and still refused: one less per window (the vendor's clock and ours never agree to the millisecond).
      this.learn({ ...this.policy, quota: Math.max(1, this.policy.quota - 1) }, now, `HTTP 429 at this pace; ${held}`);
      return;
    }
    // This one is not over yet either: it is counted among the unfinished. The vendor counted its window back from
    // when it refused, which the head of the 429 tells better than this moment (its body read, the loop's lag).
    this.lesson = {
      windowMs: Math.max(1000, this.waitCap.cap(retryAfterMs ?? 0)),
      refusedAt: ticket.send.answeredAt ?? now,
      held,
      unfinished: this.sends.unfinishedBy(now),
    };
  }

  /** The first 429's lesson, once the requests sent before it are over: the vendor's quota is what it accepted then. */
  private learnFromEpisode(lesson: NonNullable<Pacer['lesson']>): void {
    this.lesson = undefined;
    const accepted = this.sends.acceptedAround(this.episodeAt, lesson.refusedAt, lesson.windowMs);
    // Nothing accepted around it: the 429 says "not now", not how many; the hold is all it teaches.
    if (accepted === 0 || this.policy) return;
    const windowSeconds = lesson.windowMs / 1000;
    this.learn(
      { quota: accepted, windowMs: lesson.windowMs },
      this.clock.now(),
      `HTTP 429 when ${accepted} had been accepted within ${windowSeconds} s; ${lesson.held}`,
    );
  }

  stats(): PacerStats {
    const paces = [this.cap, this.policy].filter((pace): pace is Pace => pace !== undefined);
    const paceRps = paces.length === 0 ? undefined : Math.min(...paces.map(perSecond));
    return {
      requests: this.sent,
      throttled: this.throttledAnswers,
      ...(paceRps === undefined ? {} : { paceRps: Number(paceRps.toFixed(2)) }),
    };
  }

  private earliest(now: number): number {
    // Its next turn comes with an answer.
    if (!this.slowStart.allows()) return Infinity;
    let at = this.holdUntil;
    if (this.cap) at = Math.max(at, this.sends.allowedAt(this.cap));
    if (this.policy) {
      const allowed = this.sends.allowedAt(this.policy);
      if (allowed > now) this.waitedOnPolicy = true;
      at = Math.max(at, allowed);
    }
    if (this.budget && now < this.budget.until && this.budget.remaining <= 0) at = Math.max(at, this.budget.until);
    return at;
  }

  private grant(now: number): Ticket {
    this.probe(now);
    const send = this.sends.add(now);
    this.sent++;
    this.slowStart.sent();
    if (this.budget) this.budget.remaining--;
    return { send, number: this.sent };
  }

  private learn(pace: Window, now: number, why: string): void {
    this.learnedAt = now;
    this.waitedOnPolicy = false;
    this.probeStep = 1;
    this.probedFrom = undefined;
    this.setPolicy({ ...pace, source: 'learned' }, why);
  }

  /**
   * A learned pace that has held for its probing interval (twenty windows, more after refused probes), and bound, tries
   * more requests per window: one, then twice as many at each probe that met no 429, so a pace learned from an odd
   * 429 comes back in minutes, not hours.
   */
  private probe(now: number): void {
    const policy = this.policy;
    const windows = this.probeAfterWindows;
    if (policy?.source !== 'learned' || !this.waitedOnPolicy || now - this.learnedAt < windows * policy.windowMs) return;
    this.learnedAt = now;
    this.waitedOnPolicy = false;
    const step = this.probeStep;
    this.probeStep *= 2;
    this.probedFrom = policy.quota;
    this.setPolicy({ ...policy, quota: policy.quota + step }, `no 429 in ${windows} windows: ${step} more per window`);
  }

  /**
   * What the vendor announced: its policy if it names one (or a quota and its reset), else its budget. A spent budget
   * whose reset is beyond the cap is a wait beyond it (see `asked`).
   */
  private follow(announced: AnnouncedLimit, ticket: Ticket): VendorDownError | undefined {
    const { quota, remaining, resetSeconds } = announced;
    if (quota !== undefined && announced.windowSeconds === undefined && resetSeconds !== undefined) {
      this.announcedWindowSeconds = Math.max(this.announcedWindowSeconds, Math.round(resetSeconds), 1);
    }
    const windowSeconds = announced.windowSeconds ?? (this.announcedWindowSeconds || undefined);
    if (quota !== undefined && windowSeconds !== undefined) {
      this.budget = undefined;
      this.announce({ quota, windowMs: windowSeconds * 1000, source: 'announced' });
    } else if (remaining !== undefined && resetSeconds !== undefined) {
      // Requests sent after this one may not have been counted in `remaining` yet: count them as spent.
      const left = remaining - (this.sent - ticket.number);
      this.budget = { remaining: left, until: this.clock.now() + this.waitCap.cap(resetSeconds * 1000) };
      this.slowStart.end();
      if (left <= 0) return this.asked(ticket, resetSeconds * 1000, 'the budget it announces (spent, its reset)');
    }
    return undefined;
  }

  private announce(announced: Pace): void {
    // Compared as it would be kept: an announcement beyond the bounds, repeated on every answer, is one change.
    const pace = boundedWindow(announced, this.waitCap.maxWaitMs);
    const current = this.policy;
    if (current && current.quota === pace.quota && current.windowMs === pace.windowMs) return;
    // A 429 since has taught a stricter pace than the announcement: it stands until its probing passes the announcement.
    if (current?.source === 'learned' && perSecond(current) < perSecond(pace)) return;
    this.setPolicy(pace, 'as the vendor announces');
  }

  private setPolicy(wanted: Pace, why: string): void {
    const pace = boundedWindow(wanted, this.waitCap.maxWaitMs);
    this.policy = pace;
    this.slowStart.end();
    this.logger.debug(`pace: ${describe(pace)}, ${why}${this.cap ? `; --max-rps caps it at ${describe(this.cap)}` : ''}`, {
      pace_rps: Number(perSecond(pace).toFixed(2)),
      quota: pace.quota,
      window_seconds: pace.windowMs / 1000,
      source: pace.source,
    });
  }
}
