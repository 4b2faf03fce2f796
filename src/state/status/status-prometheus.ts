import { daysOfRanges } from '../../window/day-ranges.js';
import type { CalendarDay } from '../../window/days.js';
import type { KeyStatus } from './status.js';
import type { LastRun } from '../storage/versions/current.js';

/** Whether status could read a state: 0 keeps a textfile from being silently empty when it could not. */
function stateReadable(readable: boolean): string[] {
  return [
    '# HELP area_metrics_state_readable 1 when status read a usable state, 0 when there was none or it could not be used (the reason is on stderr).',
    '# TYPE area_metrics_state_readable gauge',
    `area_metrics_state_readable ${readable ? 1 : 0}`,
  ];
}

/** What status writes with `--format prometheus` when it has no usable state: the one sample that says so. */
export function prometheusWithoutState(): string {
  return `${stateReadable(false).join('\n')}\n`;
}

/**
 * Prometheus text exposition, e.g. for node_exporter's textfile collector. Every key has a sample of every gauge;
 * one that has no such day yet (no complete day, so no stores) reads NaN, which no alert threshold matches.
 */
export function formatPrometheus(statuses: readonly KeyStatus[], lastRun: LastRun | undefined): string {
  const label = (status: KeyStatus): string => `{metric="${escapeLabel(status.metric)}",key="${escapeLabel(status.key)}"}`;
  const dayStart = (day: CalendarDay | null): number | null => (day === null ? null : Date.parse(`${day}T00:00:00Z`) / 1000);
  const family = (name: string, help: string, value: (status: KeyStatus) => number | null): string[] => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} gauge`,
    ...statuses.map((status) => `${name}${label(status)} ${value(status) ?? 'NaN'}`),
  ];
  const run = lastRun
    ? [
        '# HELP area_metrics_last_run_timestamp_seconds When the last import run ended.',
        '# TYPE area_metrics_last_run_timestamp_seconds gauge',
        `area_metrics_last_run_timestamp_seconds ${Date.parse(lastRun.time) / 1000}`,
        "# HELP area_metrics_last_run_exit_code The last import run's exit code.",
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
      ...stateReadable(true),
      ...family('area_metrics_first_day_timestamp_seconds', 'Start (UTC) of the earliest day the state knows of.', (status) =>
        dayStart(status.firstDay),
      ),
      ...family(
        'area_metrics_last_complete_day_timestamp_seconds',
        'Start (UTC) of the last complete day; NaN before the first.',
        (status) => dayStart(status.lastCompleteDay),
      ),
      ...family(
        'area_metrics_days_behind',
        'Days between the latest final day (or, before the first, the day before coverage starts) and yesterday (UTC).',
        (status) => status.daysBehind,
      ),
      ...family('area_metrics_stores', 'Stores that reported on the last complete day; NaN before the first.', (status) => status.stores),
      ...family(
        'area_metrics_gap_days',
        'Days before the latest final one that are neither complete nor accepted.',
        (status) => status.gapDays,
      ),
      ...family('area_metrics_pending_days', 'Days asked for that are not complete yet.', (status) => status.pending.length),
      ...family('area_metrics_given_up_days', 'Days given up as never published.', (status) => daysOfRanges(status.givenUp).length),
      ...family(
        'area_metrics_suspect_days',
        'Days held pending because their complete data looks wrong (gaps too).',
        (status) => daysOfRanges(status.suspect).length,
      ),
      ...family(
        'area_metrics_suspect_stores',
        'Stores found outside their usual range on the days held as suspect, summed over those days.',
        (status) => status.pending.reduce((sum, pending) => sum + (pending.reason === 'suspect' ? (pending.suspectStores ?? 0) : 0), 0),
      ),
      ...run,
    ].join('\n') + '\n'
  );
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
