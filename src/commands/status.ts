import { BehindError, UsageError } from '../errors.js';
import { metricOfKey, type ImportState, type LastRun, type PendingDay } from '../output/state.js';
import { daysOfRanges, describeRange, rangesHold, rangesOfDays, type DayRange } from '../window/day-ranges.js';
import { defaultDay } from '../window/day-mode.js';
import { clockOf } from './clock.js';
import { daysBetween, daysFrom, yesterday, type UtcDay } from '../window/days.js';
import type { CommandAction } from './declaration.js';
import { readOptions } from './options.js';
import { withExistingState } from './state-location.js';
import { STATUS_OPTIONS } from './status-command.js';

/** One state key as `status` reports it. */
export interface KeyStatus {
  readonly key: string;
  readonly metric: string;
  /** The earliest day the state knows of (complete, accepted, given up or pending). */
  readonly firstDay: UtcDay | null;
  readonly lastCompleteDay: UtcDay | null;
  /** Days between the last complete (or accepted) day and yesterday (UTC; in local mode the latest local day over everywhere); null when no day is complete yet. */
  readonly daysBehind: number | null;
  readonly stores: number | null;
  /** Days between the first and the last complete day that are neither complete nor accepted, as ranges. */
  readonly gaps: readonly DayRange[];
  readonly gapDays: number;
  readonly pending: readonly ({ readonly day: UtcDay } & PendingDay)[];
  readonly givenUp: readonly DayRange[];
  readonly accepted: readonly DayRange[];
  /** More than `--max-behind` days behind (never complete counts as behind), or a gap. */
  readonly behind: boolean;
}

/** What `status` knows, from the state alone. */
export function statusOf(state: ImportState, now: Date, maxBehind: number | undefined): KeyStatus[] {
  // Behind what could be complete: yesterday (UTC), or in local mode the latest local day over everywhere.
  const last = defaultDay(state.dayMode, now);
  return state.keys().map((key) => {
    const coverage = state.coverage(key);
    const lastCompleteDay = state.lastCompleteDay(key) ?? null;
    const lastAccepted = coverage.accepted.at(-1)?.[1];
    const lastFinal = [lastCompleteDay, lastAccepted].filter((day): day is UtcDay => typeof day === 'string').sort().at(-1);
    const firstDay =
      [...coverage.complete, ...coverage.accepted, ...coverage.givenUp].map(([first]) => first).concat(coverage.pending.map(({ day }) => day)).sort()[0] ?? null;
    const gapDays =
      firstDay === null || lastFinal === undefined
        ? []
        : daysBetween(firstDay, lastFinal).filter((day) => !rangesHold(coverage.complete, day) && !rangesHold(coverage.accepted, day));
    const daysBehind = lastFinal === undefined ? null : Math.max(0, daysFrom(lastFinal, last));
    return {
      key,
      metric: metricOfKey(key),
      firstDay,
      lastCompleteDay,
      daysBehind,
      stores: state.storeCount(key) ?? null,
      gaps: rangesOfDays(gapDays),
      gapDays: gapDays.length,
      pending: coverage.pending.map(({ day, status }) => ({ day, ...status })),
      givenUp: coverage.givenUp,
      accepted: coverage.accepted,
      behind: maxBehind !== undefined && (daysBehind === null || daysBehind > maxBehind || gapDays.length > 0),
    };
  });
}

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
  const requests = run.requests === undefined ? '' : `, requests ${run.requests} (${run.throttled ?? 0} answered 429${run.paceRps === undefined ? '' : `, pace ${run.paceRps}/s`})`;
  return `last run: ${run.time} ${run.command}, exit ${run.exitCode}, rows: ${rows.length === 0 ? 'none' : rows.join(', ')}${requests}`;
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
        ...(lastRun.requests === undefined
          ? []
          : [
              '# HELP area_metrics_last_run_requests Requests the last import run sent to the API, retries included.',
              '# TYPE area_metrics_last_run_requests gauge',
              `area_metrics_last_run_requests ${lastRun.requests}`,
              '# HELP area_metrics_last_run_throttled_responses Answers HTTP 429 (too many requests) the last import run received.',
              '# TYPE area_metrics_last_run_throttled_responses gauge',
              `area_metrics_last_run_throttled_responses ${lastRun.throttled ?? 0}`,
            ]),
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

export const statusAction: CommandAction = async ({ context, reporter, options: collected }) => {
  const options = readOptions(STATUS_OPTIONS, collected, context.env);
  if (options.json && options.format !== undefined && options.format !== 'json') {
    throw new UsageError(`--json contradicts --format ${options.format}; pick one`);
  }
  const format = options.json ? 'json' : (options.format ?? 'text');
  const { maxBehind } = options;
  const now = clockOf(context.env);
  const { state, path } = await withExistingState('status', options, { context, reporter }, (state, path) => Promise.resolve({ state, path }));
  const statuses = statusOf(state, now, maxBehind);
  const lastRun = state.lastRun();
  if (format === 'json') {
    context.stdout.write(`${JSON.stringify({ state: path, days: state.dayMode, yesterday: yesterday(now), latestDayOver: defaultDay(state.dayMode, now), maxBehind: maxBehind ?? null, metrics: statuses, lastRun: lastRun ?? null })}\n`);
  } else if (format === 'prometheus') {
    context.stdout.write(formatPrometheus(statuses, lastRun));
  } else {
    context.stdout.write(`${formatText(statuses, lastRun)}days: ${state.dayMode === 'utc' ? 'UTC (--days utc)' : 'store-local (--days local)'}\n`);
  }
  const behind = statuses.filter((status) => status.behind);
  if (behind.length > 0) {
    const which = behind.map((status) => {
      const days = status.daysBehind === null ? 'no complete day yet' : `${status.daysBehind} day${status.daysBehind === 1 ? '' : 's'} behind`;
      return `${status.key} (${days}${status.gapDays > 0 ? `, gaps ${list(status.gaps)}` : ''})`;
    });
    throw new BehindError(`behind by more than --max-behind ${maxBehind}, or with gaps: ${which.join('; ')}`);
  }
};
