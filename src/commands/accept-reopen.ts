import { UsageError } from '../errors.js';
import { metricsNamed, type MetricName } from '../metrics/names.js';
import type { ImportState } from '../state/import-state.js';
import { refuseAcceptBeforeOver } from '../state/judgement/day-rules.js';
import { describeDays } from '../window/day-ranges.js';
import { today, type CalendarDay } from '../window/days.js';
import { resolveDays } from '../window/requested-days.js';
import type { DAY_OPTIONS, DayAction, DayOptions } from './accept-reopen-options.js';
import { clockOf } from './clock.js';
import type { CommandAction } from './declaration.js';
import { withExistingState } from './existing-state.js';
import { recordSettlement } from '../import/settlement.js';
import { windowFromFlags } from './window-flags.js';

function daysOf(options: DayOptions, action: DayAction, now: Date): CalendarDay[] {
  const window = windowFromFlags(options);
  if (window === undefined) throw new UsageError(`${action} needs --date D or --from D1 --to D2`);
  const days = resolveDays(window, now);
  // Today's window is not over: it cannot be final, and there is nothing to reopen yet.
  if (days.includes(today(now)))
    throw new UsageError(`${today(now)} is today (UTC), which is not over yet; ${action} days up to yesterday`);
  return days;
}

async function change(state: ImportState, action: DayAction, metric: MetricName, days: readonly CalendarDay[]): Promise<string> {
  const what = `${describeDays(days)} (${days.length} day${days.length === 1 ? '' : 's'})`;
  if (action === 'accept') {
    await state.accept(metric, days);
    return `accepted ${metric} ${what}: final, --catch-up no longer asks for them\n`;
  }
  await state.reopen(metric, days);
  return `reopened ${metric} ${what}: pending, the next --catch-up imports them\n`;
}

export function dayAction(action: DayAction): CommandAction<typeof DAY_OPTIONS> {
  return async ({ context, reporter, options, args }) => {
    const metrics = metricsNamed(args[0] ?? '');
    const clock = clockOf(context.env);
    const now = clock();
    const days = daysOf(options, action, now);
    await withExistingState(action, options, { context, reporter, now }, async (state, _location, destination) => {
      if (action === 'accept') refuseAcceptBeforeOver(days, state.dayMode, now);
      // The manifest beside the runs' tells loaders of the change; it is made from the days' standing before and after.
      const settlement = { command: `${action} ${args[0] ?? ''} ${describeDays(days)}`, metrics, days };
      const lines: string[] = [];
      await recordSettlement(
        destination,
        state,
        settlement,
        async () => {
          for (const metric of metrics) lines.push(await change(state, action, metric, days));
        },
        clock,
      );
      for (const line of lines) context.stdout.write(line);
    });
  };
}
