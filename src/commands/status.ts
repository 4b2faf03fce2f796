import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { ImportState, metricOfKey, STATE_FILE_NAME, type PendingDay } from '../output/state.js';
import { daysFrom, yesterday, type UtcDay } from '../window/days.js';
import type { CommandContext } from './context.js';
import { envValue } from './settings.js';

interface StatusOptions {
  readonly output?: string;
  readonly state?: string;
  readonly maxBehind?: string;
  readonly json?: boolean;
  readonly format?: 'text' | 'json' | 'prometheus';
}

/** One state key as `status` reports it. */
export interface KeyStatus {
  readonly key: string;
  readonly metric: string;
  readonly lastCompleteDay: UtcDay | null;
  /** Days between the last complete day and yesterday (UTC); null when no day is complete yet. */
  readonly daysBehind: number | null;
  readonly stores: number | null;
  readonly pending: readonly ({ readonly day: UtcDay } & PendingDay)[];
  /** More than `--max-behind` days behind (never complete counts as behind). */
  readonly behind: boolean;
}

/** What `status` knows, from the state alone. */
export function statusOf(state: ImportState, now: Date, maxBehind: number | undefined): KeyStatus[] {
  const last = yesterday(now);
  return state.keys().map((key) => {
    const lastCompleteDay = state.lastCompleteDay(key) ?? null;
    const daysBehind = lastCompleteDay === null ? null : daysFrom(lastCompleteDay, last);
    return {
      key,
      metric: metricOfKey(key),
      lastCompleteDay,
      daysBehind,
      stores: state.storeCount(key) ?? null,
      pending: state.pending(key).map(({ day, status }) => ({ day, ...status })),
      behind: maxBehind !== undefined && (daysBehind === null || daysBehind > maxBehind),
    };
  });
}

function describePending(pending: KeyStatus['pending'][number]): string {
  switch (pending.reason) {
    case 'not-published':
      return `${pending.day} not published`;
    case 'partial':
      {
      const missing = pending.missingStores ?? 0;
      return `${pending.day} partial (${missing} store${missing === 1 ? '' : 's'} missing)`;
    }
    case 'not-over':
      return `${pending.day} imported before it was over`;
  }
}

export function formatText(statuses: readonly KeyStatus[]): string {
  const rows = [
    ['metric', 'last complete', 'behind', 'stores', 'pending'],
    ...statuses.map((status) => [
      status.key,
      status.lastCompleteDay ?? 'none yet',
      status.daysBehind === null ? '-' : String(status.daysBehind),
      status.stores === null ? '-' : String(status.stores),
      status.pending.length === 0 ? '-' : status.pending.map(describePending).join(', '),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n') + '\n';
}

/** Prometheus text exposition, e.g. for node_exporter's textfile collector. */
export function formatPrometheus(statuses: readonly KeyStatus[]): string {
  const label = (status: KeyStatus): string => `{metric="${escapeLabel(status.metric)}",key="${escapeLabel(status.key)}"}`;
  const family = (name: string, help: string, value: (status: KeyStatus) => number | null): string[] => {
    const samples = statuses.flatMap((status) => {
      const sample = value(status);
      return sample === null ? [] : [`${name}${label(status)} ${sample}`];
    });
    return [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...samples];
  };
  return (
    [
      ...family('area_metrics_last_complete_day_timestamp_seconds', 'Start (UTC) of the last complete day.', (status) =>
        status.lastCompleteDay === null ? null : Date.parse(`${status.lastCompleteDay}T00:00:00Z`) / 1000,
      ),
      ...family('area_metrics_days_behind', 'Days between the last complete day and yesterday (UTC).', (status) => status.daysBehind),
      ...family('area_metrics_stores', 'Stores that reported on the last complete day.', (status) => status.stores),
      ...family('area_metrics_pending_days', 'Days after the last complete one that are not complete yet.', (status) => status.pending.length),
    ].join('\n') + '\n'
  );
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

async function runStatus(options: StatusOptions, context: CommandContext): Promise<void> {
  if (options.json === true && options.format !== undefined && options.format !== 'json') {
    throw new UsageError(`--json contradicts --format ${options.format}; pick one`);
  }
  const format = options.json === true ? 'json' : (options.format ?? 'text');
  let maxBehind: number | undefined;
  if (options.maxBehind !== undefined) {
    maxBehind = /^\d{1,5}$/.test(options.maxBehind.trim()) ? Number(options.maxBehind.trim()) : Number.NaN;
    if (Number.isNaN(maxBehind)) throw new UsageError(`--max-behind ${JSON.stringify(options.maxBehind)} must be a whole number of days`);
  }
  const output = options.output ?? envValue(context.env, 'AREA_METRICS_OUTPUT') ?? './area-metrics-data';
  if (options.state === undefined && output === '-') throw new UsageError('status reads a folder\'s state; with -o - pass --state <file>');
  const path = options.state ?? join(output, STATE_FILE_NAME);
  const now = new Date();
  const state = await ImportState.loadExisting(path, { now, metricNames: METRIC_NAMES });
  const statuses = statusOf(state, now, maxBehind);
  if (format === 'json') {
    context.stdout.write(`${JSON.stringify({ state: path, yesterday: yesterday(now), maxBehind: maxBehind ?? null, metrics: statuses })}\n`);
  } else if (format === 'prometheus') {
    context.stdout.write(formatPrometheus(statuses));
  } else {
    context.stdout.write(formatText(statuses));
  }
  const behind = statuses.filter((status) => status.behind);
  if (behind.length > 0) {
    const which = behind.map((status) => `${status.key} (${status.daysBehind === null ? 'no complete day yet' : `${status.daysBehind} days`})`);
    context.reportError(`behind by more than --max-behind ${maxBehind}: ${which.join(', ')}`);
    context.exitCode = 1;
  }
}

export function registerStatusCommand(program: Command, context: CommandContext): void {
  program
    .command('status')
    .description("say how far behind each metric's output is, from the state file alone (no credentials, no request)")
    .option('-o, --output <dir>', 'output folder whose state to read (env: AREA_METRICS_OUTPUT, default: ./area-metrics-data)')
    .option('--state <file>', 'state file to read (default: <output>/.area-metrics-state.json)')
    .option('--max-behind <n>', 'exit 1 when a metric is more than n days behind yesterday (UTC)')
    .option('--json', 'one JSON object on stdout (same as --format json)')
    .addOption(new Option('--format <format>', 'text, json, or prometheus (node_exporter textfile collector)').choices(['text', 'json', 'prometheus']))
    .addHelpText(
      'after',
      `
Exit codes: 0 fine, 1 a metric is more than --max-behind days behind, 2 no or unusable state file.

Examples:
  $ area-metrics status -o /data/area-metrics
  $ area-metrics status -o /data/area-metrics --max-behind 1 || echo behind | mail -s area-metrics ops@example.com
  $ area-metrics status -o /data/area-metrics --format prometheus > /var/lib/node_exporter/area_metrics.prom`,
    )
    .action(async (options: StatusOptions) => {
      await runStatus(options, context);
    });
}
