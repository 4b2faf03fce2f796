import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { METRIC_NAMES, type MetricName } from '../metrics/descriptors.js';
import type { ImportState } from '../state/import-state.js';
import { describeRange, rangesOfDays } from '../window/day-ranges.js';
import { resolveDays, today, type UtcDay } from '../window/days.js';
import type { CommandContext } from './context.js';
import { IMPORT_OPTIONS } from './import-options.js';
import { addOptions, readOptions, valueOption, type CollectedOptions, type OptionValues } from './options.js';
import { clockOf } from './clock.js';
import { STATE_LOCATION_OPTIONS, withExistingState } from './state-location.js';

const SETTLE_OPTIONS = {
  date: valueOption({ flags: '--date <YYYY-MM-DD>', parse: IMPORT_OPTIONS.date.parse, description: 'one UTC day' }),
  from: valueOption({ flags: '--from <YYYY-MM-DD>', parse: IMPORT_OPTIONS.from.parse, description: 'first UTC day of a range' }),
  to: valueOption({ flags: '--to <YYYY-MM-DD>', parse: IMPORT_OPTIONS.to.parse, defaultText: '--from', description: 'last UTC day of the range, inclusive' }),
  ...STATE_LOCATION_OPTIONS,
};

type SettleOptions = OptionValues<typeof SETTLE_OPTIONS>;

type Action = 'accept' | 'reopen';

/** The metrics a `<metric|all>` argument names. */
function metricsOf(argument: string): readonly MetricName[] {
  if (argument === 'all') return METRIC_NAMES;
  const metric = METRIC_NAMES.find((name) => name === argument);
  if (metric === undefined) throw new UsageError(`unknown metric ${JSON.stringify(argument)}; use ${METRIC_NAMES.join(', ')} or all`);
  return [metric];
}

function daysOf(options: SettleOptions, action: Action, now: Date): UtcDay[] {
  if (options.date !== undefined && (options.from !== undefined || options.to !== undefined)) {
    throw new UsageError('--date cannot be combined with --from/--to; use one or the other');
  }
  if (options.to !== undefined && options.from === undefined) throw new UsageError('--to needs --from');
  if (options.date === undefined && options.from === undefined) throw new UsageError(`${action} needs --date D or --from D1 --to D2`);
  const days =
    options.date !== undefined
      ? resolveDays({ kind: 'date', date: options.date }, now)
      : resolveDays({ kind: 'range', from: options.from!, ...(options.to === undefined ? {} : { to: options.to }) }, now);
  // Today's window is not over: it cannot be final, and there is nothing to reopen yet.
  if (days.includes(today(now))) throw new UsageError(`${today(now)} is today (UTC), which is not over yet; ${action} days up to yesterday`);
  return days;
}

async function runSettle(action: Action, argument: string, collected: CollectedOptions, context: CommandContext): Promise<void> {
  const metrics = metricsOf(argument);
  const options = readOptions(SETTLE_OPTIONS, collected, context.env);
  const now = clockOf(context.env);
  const days = daysOf(options, action, now);
  await withExistingState(action, options, context, async (state) => {
    await settle(state, action, metrics, days, context);
  });
}

async function settle(state: ImportState, action: Action, metrics: readonly MetricName[], days: readonly UtcDay[], context: CommandContext): Promise<void> {
  const what = `${rangesOfDays(days).map(describeRange).join(', ')} (${days.length} day${days.length === 1 ? '' : 's'})`;
  for (const metric of metrics) {
    if (action === 'accept') await state.accept(metric, days);
    else await state.reopen(metric, days);
    context.stdout.write(
      action === 'accept'
        ? `accepted ${metric} ${what}: final, --catch-up no longer asks for them\n`
        : `reopened ${metric} ${what}: pending, the next --catch-up imports them\n`,
    );
  }
}

const SUMMARIES: Record<Action, string> = {
  accept: 'record days as final whatever their data (no request): --catch-up stops asking, status counts no gap',
  reopen: 'make days pending again (no request), so the next --catch-up imports them',
};

export function registerSettleCommands(program: Command, context: CommandContext): void {
  for (const action of ['accept', 'reopen'] as const) {
    const command = program
      .command(`${action} <metric>`)
      .description(SUMMARIES[action])
      .addHelpText(
        'after',
        `
<metric> is unique-users, avg-screen-time, traffic or all.

Examples:
  # a day the vendor will never publish: stop asking for it, and stop status counting it as a gap
  $ area-metrics accept traffic --date 2026-11-05 -o /data/area-metrics
  # the vendor republished a week: import it again on the next --catch-up
  $ area-metrics reopen all --from 2026-11-01 --to 2026-11-07 -o /data/area-metrics
  # the same, for a state kept in a bucket beside the data
  $ area-metrics reopen all --from 2026-11-01 --to 2026-11-07 -o s3://my-bucket/area-metrics`,
      );
    addOptions(command, SETTLE_OPTIONS).action(async (metric: string, collected: CollectedOptions) => {
      await runSettle(action, metric, collected, context);
    });
  }
}
