import type { UnitOutcome } from './pipeline.js';

/** What a run wrote of one metric: its rows, and the bytes and files its sink stored. */
export interface MetricTally {
  rowCount: number;
  size: number;
  fileCount: number;
}

/**
 * The one count of a run, fed once per committed unit in plan order: the summary, the state's last run, the manifest
 * and the lineage events all read it.
 */
export class RunTally {
  readonly byMetric: Record<string, MetricTally> = {};
  rows = 0;
  rejected = 0;
  /** Units written whose bytes equal the file already there, left untouched. */
  unchanged = 0;
  succeeded = 0;
  failed = 0;

  add(outcome: UnitOutcome): void {
    if (!outcome.ok) {
      this.failed++;
      return;
    }
    const { data, file } = outcome;
    this.succeeded++;
    this.rows += data.rowCount;
    this.rejected += data.rejected.length;
    if (outcome.path !== undefined && !outcome.changed) this.unchanged++;
    const metric = (this.byMetric[outcome.unit.metric.name] ??= { rowCount: 0, size: 0, fileCount: 0 });
    metric.rowCount += data.rowCount;
    if (file !== undefined) {
      metric.size += file.bytes;
      metric.fileCount++;
    }
  }

  /** A metric's tally; zero for one the run wrote nothing of. */
  of(metric: string): MetricTally {
    return this.byMetric[metric] ?? { rowCount: 0, size: 0, fileCount: 0 };
  }

  /** Rows per metric, for the state's last run and the summary's JSON line. */
  rowsByMetric(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.byMetric).map(([metric, tally]) => [metric, tally.rowCount]));
  }
}
