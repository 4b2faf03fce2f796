import { InterruptedError, OutputError } from '../errors.js';
import type { UnitSink } from '../output/sinks.js';
import type { Unit, UnitData } from './unit.js';

export type UnitOutcome =
  | { readonly unit: Unit; readonly ok: true; readonly data: UnitData; readonly destination: string }
  | { readonly unit: Unit; readonly ok: false; readonly error: unknown };

export interface PipelineOptions {
  /** Units fetched at once. */
  readonly concurrency: number;
  readonly fetch: (unit: Unit) => Promise<UnitData>;
  readonly sink: UnitSink;
  readonly signal?: AbortSignal;
  /** After each unit, in plan order: the place to log it and to advance the state. */
  readonly onOutcome?: (outcome: UnitOutcome) => Promise<void> | void;
}

type Settled = { ok: true; data: UnitData } | { ok: false; error: unknown };

/**
 * Fetches units concurrently and commits them strictly in plan order (metric, day, store): output and state are the
 * same whatever the timing, and at most 2 × concurrency fetched units wait in memory for their turn. A failed unit
 * does not stop the others, but one whose output could not be written (`OutputError`: a full or read-only disk)
 * stops the fetching: the units in flight finish and are dropped, and the outcomes end there. An interrupt stops
 * everything and is rethrown.
 *
 * Memory stays flat over any range: once a unit is committed and reported to `onOutcome`, its rows and results are
 * released, so the returned outcomes carry every count but no `pieces`.
 */
export async function runPipeline(units: readonly Unit[], options: PipelineOptions): Promise<UnitOutcome[]> {
  const concurrency = Math.max(1, options.concurrency);
  const lookahead = concurrency * 2;
  const settled: (Promise<Settled> | undefined)[] = [];
  let running = 0;
  let nextToStart = 0;
  let committed = 0;
  let outputFailed = false;

  const startMore = (): void => {
    while (running < concurrency && nextToStart < units.length && nextToStart < committed + lookahead) {
      if (options.signal?.aborted || outputFailed) return;
      const index = nextToStart++;
      running++;
      const promise = options.fetch(units[index] as Unit).then(
        (data): Settled => ({ ok: true, data }),
        (error: unknown): Settled => ({ ok: false, error }),
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
    const result = await (settled[index] as Promise<Settled>);
    let outcome: UnitOutcome;
    if (result.ok) {
      try {
        await options.sink.commit(result.data, options.signal);
        outcome = { unit, ok: true, data: result.data, destination: options.sink.describe(result.data) };
      } catch (error) {
        outcome = { unit, ok: false, error };
      }
    } else {
      outcome = { unit, ok: false, error: result.error };
    }
    if (!outcome.ok && (outcome.error instanceof InterruptedError || options.signal?.aborted)) {
      await Promise.allSettled(settled.filter((promise) => promise !== undefined));
      throwIfInterrupted(options.signal);
      throw outcome.error;
    }
    try {
      await options.onOutcome?.(outcome);
    } catch (error) {
      // Recording a written unit (the state) can meet the same failing disk: the unit then fails with that error.
      if (!outcome.ok || !(error instanceof OutputError)) throw error;
      outcome = { unit, ok: false, error };
      await options.onOutcome?.(outcome);
    }
    settled[index] = undefined;
    outcomes.push(outcome.ok ? { ...outcome, data: { ...outcome.data, pieces: [] } } : outcome);
    committed = index + 1;
    if (!outcome.ok && outcome.error instanceof OutputError) {
      outputFailed = true;
      await Promise.allSettled(settled.filter((promise) => promise !== undefined));
      break;
    }
    startMore();
  }
  return outcomes;
}

function throwIfInterrupted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const reason: unknown = signal.reason;
  throw reason instanceof InterruptedError ? reason : new InterruptedError('SIGINT');
}
