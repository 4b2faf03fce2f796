import type { Command } from 'commander';
import { BehindError, UsageError } from '../errors.js';
import { statusOf } from '../state/status.js';
import { formatPrometheus, prometheusWithoutState } from '../state/status-prometheus.js';
import { behindMessage, formatText } from '../state/status-report.js';
import { defaultDay } from '../window/day-mode.js';
import { yesterday } from '../window/days.js';
import { clockOf } from './clock.js';
import type { CommandContext } from './context.js';
import { addOptions, integer, oneOf, readOptions, switchOption, valueOption, type CollectedOptions } from './options.js';
import { STATE_LOCATION_OPTIONS, withExistingState } from './state-location.js';

const STATUS_FORMATS = ['text', 'json', 'prometheus'] as const;

const STATUS_OPTIONS = {
  ...STATE_LOCATION_OPTIONS,
  maxBehind: valueOption({ flags: '--max-behind <n>', parse: integer(0, 99_999, 'a whole number of days'), description: 'exit 8 when a metric is more than n days behind yesterday (UTC), or has a gap' }),
  json: switchOption({ flags: '--json', description: 'one JSON object on stdout (same as --format json)' }),
  format: valueOption({ flags: '--format <format>', parse: oneOf(STATUS_FORMATS), choices: STATUS_FORMATS, defaultText: 'text', description: 'text, json, or prometheus (node_exporter textfile collector)' }),
};

async function runStatus(collected: CollectedOptions, context: CommandContext): Promise<void> {
  const options = readOptions(STATUS_OPTIONS, collected, context.env);
  if (options.json && options.format !== undefined && options.format !== 'json') {
    throw new UsageError(`--json contradicts --format ${options.format}; pick one`);
  }
  const format = options.json ? 'json' : (options.format ?? 'text');
  const { maxBehind } = options;
  const now = clockOf(context.env);
  const { state, path } = await withExistingState('status', options, context, (state, path) => Promise.resolve({ state, path })).catch((error: unknown) => {
    // `> file.prom` has already emptied the file: a sample saying so keeps the metrics from silently vanishing.
    if (format === 'prometheus') context.stdout.write(prometheusWithoutState());
    throw error;
  });
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
  if (behind.length > 0) throw new BehindError(behindMessage(behind, maxBehind));
}

export function registerStatusCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('status')
    .description("say how far behind each metric's output is, its coverage and gaps, from the state alone (no credentials, no request)")
    .addHelpText(
      'after',
      `
Exit codes: 0 fine, 8 a metric is more than --max-behind days behind or has a gap, 2 no or unusable state file;
with a state in a bucket also 3 (the store rejected the AWS credentials) and 4 (the store unreachable after retries).

Examples:
  $ area-metrics status -o /data/area-metrics
  $ area-metrics status -o /data/area-metrics --max-behind 1 || echo behind | mail -s area-metrics ops@example.com
  $ area-metrics status -o /data/area-metrics --format prometheus > /var/lib/node_exporter/area_metrics.prom
  $ area-metrics status -o s3://my-bucket/area-metrics --max-behind 1`,
    );
  addOptions(command, STATUS_OPTIONS).action(async (collected: CollectedOptions) => {
    await runStatus(collected, context);
  });
}
