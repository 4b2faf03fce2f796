import { AuthError, InterruptedError, OutputError, UnavailableError } from '../errors.js';
import { VendorDownError } from '../fetch/outage.js';
import type { StoredFile, UnitSink, UnitWrite } from '../output/sinks.js';
import type { Unit, UnitData } from '../metrics/unit.js';
import type { RunStop } from './stop.js';

export type UnitOutcome =
  | {
      readonly unit: Unit;
      readonly ok: true;
      readonly data: UnitData;
      readonly destination: string;
      /** The file written, when the sink writes files. */
      readonly path?: string;
      /** False when the bytes equal what was there, which was left untouched. */
      readonly changed: boolean;
      /** The data file as stored, relative to the output, with its size and SHA-256 (for the run manifest). */
      readonly file?: StoredFile;
    }
  | { readonly unit: Unit; readonly ok: false; readonly error: unknown };

export interface PipelineOptions {
  /** Units fetched at once. */
  readonly concurrency: number;
  readonly fetch: (unit: Unit) => Promise<UnitData>;
  readonly sink: UnitSink;
  /**
   * The sink takes each unit as soon as it is fetched (each on its own, whatever the order: a database loading them
   * on connections of its own), rather than in plan order one at a time.
   */
  readonly commitsAhead?: boolean;
  readonly signal?: AbortSignal;
  /**
   * Aborted when a request's credentials are rejected, or the vendor is down: the fetches (whose client listens to
   * it) stop at once and no further unit starts, since every other request would fail the same way.
   */
  readonly halt?: AbortController;
  /**
   * After the sink, in plan order, once per unit: records it (the state) and returns its final outcome, which is a
   * failure when the record could not be written.
   */
  readonly record?: (outcome: UnitOutcome) => Promise<UnitOutcome>;
  /** Each unit's final outcome, once, in plan order: the place to count and log it. */
  readonly onOutcome?: (outcome: UnitOutcome) => Promise<void> | void;
}

export interface PipelineResult extends RunStop {
  /** In plan order; units after them were never fetched or never written. */
  readonly outcomes: UnitOutcome[];
}

type Settled = { ok: true; data: UnitData } | { ok: false; error: unknown };

/** The reason a halted fetch rejects with: not the unit's failure, only the end of the run. */
class Halted extends Error {}

/**
 * Fetches units concurrently and commits them strictly in plan order (metric, day, store): output and state are the
 * same whatever the timing, and at most 2 × concurrency fetched units wait in memory for their turn. A failed unit
 * does not stop the others, but one whose output could not be written (`OutputError`: a full or read-only disk; or
 * an `UnavailableError` from the write: a store or database unreachable after its retries) stops the fetching: the
 * units in flight finish and are dropped, and the outcomes end there. A rejected credential, or a vendor found down
 * (VendorDownError), stops everything at once: requests in flight are aborted and the outcomes end with that unit
 * (units before it that were fetched whole are still committed). An interrupt stops everything and is rethrown.
 *
 * A unit is committed once: the sink writes it, `record` records it, and only the final outcome reaches `onOutcome`.
 * With `commitsAhead` (a database, each unit its own transaction), the sink is given each unit as soon as it is fetched,
 * so its loads overlap; the outcomes are still taken, recorded and reported in plan order, and a unit it loaded after
 * one whose output failed stays loaded but unrecorded, for the next run to find unchanged.
 * Memory stays flat over any range: once a unit is committed, its rows and results are released, so the returned
 * outcomes carry every count but no `pieces`.
 */
export async function runPipeline(units: readonly Unit[], options: PipelineOptions): Promise<PipelineResult> {
  const concurrency = Math.max(1, options.concurrency);
  const lookahead = concurrency * 2;
  const settled: (Promise<Settled> | undefined)[] = [];
  // Where the sink takes units ahead of plan order: each unit's commit, started as soon as it is fetched.
  const early: (Promise<UnitWrite> | undefined)[] = [];
  let running = 0;
  let nextToStart = 0;
  let committed = 0;
  let stoppedBy: PipelineResult['stoppedBy'];
  let stopCause: VendorDownError | undefined;
  let authReported = false;

  const startMore = (): void => {
    while (running < concurrency && nextToStart < units.length && nextToStart < committed + lookahead) {
      if (options.signal?.aborted || stoppedBy !== undefined) return;
      const index = nextToStart++;
      running++;
      const promise = options.fetch(units[index] as Unit).then(
        (data): Settled => {
          if (options.commitsAhead && stoppedBy === undefined && !options.signal?.aborted) {
            const write = options.sink.commit(data, options.signal);
            // Awaited in plan order below; a failure is that unit's outcome, not an unhandled rejection meanwhile.
            write.catch(() => {});
            early[index] = write;
          }
          return { ok: true, data };
        },
        (error: unknown): Settled => {
          if (stoppedBy === undefined && (error instanceof AuthError || error instanceof VendorDownError)) {
            stoppedBy = error instanceof AuthError ? 'credentials' : 'vendor-down';
            if (error instanceof VendorDownError) stopCause = error;
            options.halt?.abort(new Halted(error.message));
          }
          return { ok: false, error };
        },
      );
      settled[index] = promise;
      void promise.finally(() => {
        running--;
        startMore();
      });
    }
  };

  const outcomes: UnitOutcome[] = [];
  startMore();
  for (let index = 0; index < units.length; index++) {
    const unit = units[index] as Unit;
    throwIfInterrupted(options.signal);
    const result = await settled[index];
    if (stoppedBy === 'credentials' || stoppedBy === 'vendor-down') {
      // Not started, aborted by the halt, or rejected like the first one in flight at the same time: the first
      // rejection in plan order is the one reported, the others are units not attempted. A vendor down is reported
      // by the unit that used its retries first; the units stopped after it were not attempted.
      const stopped = (error: unknown): boolean =>
        error instanceof Halted || error instanceof VendorDownError || (error instanceof AuthError && authReported);
      const skipped = result === undefined || (!result.ok && stopped(result.error));
      if (skipped) continue;
      if (!result.ok && result.error instanceof AuthError) authReported = true;
    }
    if (result === undefined) break;
    let outcome: UnitOutcome;
    // Whether the unit failed at its write with the destination unreachable (its retries spent): every later write
    // would wait on it the same way, so the run stops as for a refused write.
    let destinationDown = false;
    if (result.ok) {
      try {
        const written = await (early[index] ?? options.sink.commit(result.data, options.signal));
        outcome = {
          unit,
          ok: true,
          data: result.data,
          destination: options.sink.describe(result.data),
          changed: written.changed,
          ...(written.path === undefined ? {} : { path: written.path }),
          ...(written.file === undefined ? {} : { file: written.file }),
        };
      } catch (error) {
        outcome = { unit, ok: false, error };
        destinationDown = error instanceof UnavailableError;
      }
    } else {
      outcome = { unit, ok: false, error: result.error };
    }
    if (!outcome.ok && (outcome.error instanceof InterruptedError || options.signal?.aborted)) {
      await Promise.allSettled([...settled, ...early].filter((promise) => promise !== undefined));
      throwIfInterrupted(options.signal);
      throw outcome.error;
    }
    if (options.record) {
      try {
        outcome = await options.record(outcome);
      } catch (error) {
        // Recording a written unit (the state) can meet the same failing disk: the unit then fails with that error.
        if (!outcome.ok || !(error instanceof OutputError)) throw error;
        outcome = { unit, ok: false, error };
      }
    }
    await options.onOutcome?.(outcome);
    settled[index] = undefined;
    early[index] = undefined;
    outcomes.push(outcome.ok ? { ...outcome, data: { ...outcome.data, pieces: [] } } : outcome);
    committed = index + 1;
    if (!outcome.ok && (outcome.error instanceof OutputError || destinationDown)) {
      stoppedBy = 'output';
      await Promise.allSettled([...settled, ...early].filter((promise) => promise !== undefined));
      break;
    }
    startMore();
  }
  await Promise.allSettled([...settled, ...early].filter((promise) => promise !== undefined));
  // A signal that came while the last units were written (a sink that finished them anyway) still ends the run as
  // interrupted: an operator who stopped it never reads 0.
  throwIfInterrupted(options.signal);
  return { outcomes, ...(stoppedBy === undefined ? {} : { stoppedBy }), ...(stopCause === undefined ? {} : { stopCause }) };
}

function throwIfInterrupted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const reason: unknown = signal.reason;
  throw reason instanceof InterruptedError ? reason : new InterruptedError('SIGINT');
}
