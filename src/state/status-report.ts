import { daysOfRanges, describeRange, type DayRange } from '../window/day-ranges.js';
import type { UtcDay } from '../window/days.js';
import type { KeyStatus } from './status.js';
import type { LastRun } from './versions/v4.js';

function describePending(pending: KeyStatus['pending'][number]): string {
  switch (pending.reason) {
    case 'partly-published': {
      const missing = pending.missingStores ?? 0;
      return `${pending.day} partly published (${missing} store${missing === 1 ? '' : 's'} missing)`;
    }
    case 'not-over':
      return `${pending.day} imported before it was over`;
    default:
      return `${pending.day} ${pending.reason.replace('-', ' ')}`;
  }
}

function list(ranges: readonly DayRange[]): string {
  return ranges.length === 0 ? '-' : ranges.map(describeRange).join(', ');
}

function describeRun(run: LastRun): string {
  const rows = Object.entries(run.rows).map(([metric, count]) => `${metric} ${count}`);
  return `last run: ${run.time} ${run.command}, exit ${run.exitCode}, rows: ${rows.length === 0 ? 'none' : rows.join(', ')}`;
}

export function formatText(statuses: readonly KeyStatus[], lastRun: LastRun | undefined): string {
  const rows = [
    ['metric', 'first day', 'last complete', 'behind', 'stores', 'gaps', 'given up', 'pending'],
    ...statuses.map((status) => [
      status.key,
      status.firstDay ?? '-',
      status.lastCompleteDay ?? 'none yet',
      status.daysBehind === null ? '-' : String(status.daysBehind),
      status.stores === null ? '-' : String(status.stores),
      list(status.gaps),
      list(status.givenUp),
      status.pending.length === 0 ? '-' : status.pending.map(describePending).join(', '),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const table = rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
  return [...table, ...(lastRun ? [describeRun(lastRun)] : [])].join('\n') + '\n';
}

/** Prometheus text exposition, e.g. for node_exporter's textfile collector. */
export function formatPrometheus(statuses: readonly KeyStatus[], lastRun: LastRun | undefined): string {
  const label = (status: KeyStatus): string => `{metric="${escapeLabel(status.metric)}",key="${escapeLabel(status.key)}"}`;
  const dayStart = (day: UtcDay | null): number | null => (day === null ? null : Date.parse(`${day}T00:00:00Z`) / 1000);
  const family = (name: string, help: string, value: (status: KeyStatus) => number | null): string[] => {
    const samples = statuses.flatMap((status) => {
      const sample = value(status);
      return sample === null ? [] : [`${name}${label(status)} ${sample}`];
    });
    return [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...samples];
  };
  const run = lastRun
    ? [
        '# HELP area_metrics_last_run_timestamp_seconds When the last import run ended.',
        '# TYPE area_metrics_last_run_timestamp_seconds gauge',
        `area_metrics_last_run_timestamp_seconds ${Date.parse(lastRun.time) / 1000}`,
        '# HELP area_metrics_last_run_exit_code The last import run\'s exit code.',
        '# TYPE area_metrics_last_run_exit_code gauge',
        `area_metrics_last_run_exit_code ${lastRun.exitCode}`,
        '# HELP area_metrics_last_run_rows Rows the last import run wrote, per metric.',
        '# TYPE area_metrics_last_run_rows gauge',
        ...Object.entries(lastRun.rows).map(([metric, rows]) => `area_metrics_last_run_rows{metric="${escapeLabel(metric)}"} ${rows}`),
      ]
    : [];
  return (
    [
      ...family('area_metrics_first_day_timestamp_seconds', 'Start (UTC) of the earliest day the state knows of.', (status) => dayStart(status.firstDay)),
      ...family('area_metrics_last_complete_day_timestamp_seconds', 'Start (UTC) of the last complete day.', (status) => dayStart(status.lastCompleteDay)),
      ...family('area_metrics_days_behind', 'Days between the last complete day and yesterday (UTC).', (status) => status.daysBehind),
      ...family('area_metrics_stores', 'Stores that reported on the last complete day.', (status) => status.stores),
      ...family('area_metrics_gap_days', 'Days before the last complete one that are neither complete nor accepted.', (status) => status.gapDays),
      ...family('area_metrics_pending_days', 'Days asked for that are not complete yet.', (status) => status.pending.length),
      ...family('area_metrics_given_up_days', 'Days given up as never published.', (status) => daysOfRanges(status.givenUp).length),
      ...run,
    ].join('\n') + '\n'
  );
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The one line `--max-behind` fails with, naming each key behind and why. */
export function behindMessage(behind: readonly KeyStatus[], maxBehind: number | undefined): string {
  const which = behind.map((status) => {
    const days = status.daysBehind === null ? 'no complete day yet' : `${status.daysBehind} day${status.daysBehind === 1 ? '' : 's'} behind`;
    return `${status.key} (${days}${status.gapDays > 0 ? `, gaps ${list(status.gaps)}` : ''})`;
  });
  return `behind by more than --max-behind ${maxBehind}, or with gaps: ${which.join('; ')}`;
}
