import { openStoredUnits } from '../destination/open.js';
import type { DestinationSpec } from '../destination/spec.js';
import type { ObjectStores } from '../destination/object-stores.js';
import type { SessionOptions } from '../destination/postgres/session.js';
import { UsageError } from '../errors.js';
import type { MetricDescriptor } from '../metrics/descriptors.js';
import type { ImportState } from '../state/import-state.js';
import type { FaultName } from './faults.js';
import { outputDays, type DaySpan } from './output-days.js';
import { replayMetrics } from './replay.js';
import { summaryOf, type MetricSummary } from './report.js';

/** What a backtest of an output needs: where it is, the state that says how it was written, and what to replay. */
export interface OutputBacktest {
  readonly spec: DestinationSpec;
  readonly state: ImportState;
  readonly parts: { readonly stores: ObjectStores; readonly database: SessionOptions };
  readonly metrics: readonly MetricDescriptor[];
  readonly span: DaySpan;
  readonly fault?: FaultName;
  readonly onNight?: (metric: string, done: number, total: number) => void;
}

/**
 * The rule replayed over what an output holds, in its own layout and day mode, each metric on its own; no data to
 * replay at all is a usage error that says so (as `status` says there is no state).
 */
export async function backtestOutput(backtest: OutputBacktest): Promise<MetricSummary[]> {
  const { state, spec, fault } = backtest;
  const stored = openStoredUnits(spec, { layout: state.layout, mode: state.dayMode }, backtest.parts);
  try {
    const replays = await replayMetrics({
      metrics: backtest.metrics,
      mode: state.dayMode,
      ...outputDays(stored, backtest.span),
      ...(fault === undefined ? {} : { fault }),
      ...(backtest.onNight === undefined ? {} : { onNight: backtest.onNight }),
    });
    if (replays.every((replay) => replay.days.length === 0)) {
      const span = backtest.span.from === undefined && backtest.span.to === undefined ? '' : ' between --from and --to';
      throw new UsageError(`no data to backtest in ${spec.name}${span}: import days first (its state is ${state.path})`);
    }
    return replays.map((replay) => summaryOf(replay, fault));
  } finally {
    await stored.close();
  }
}
