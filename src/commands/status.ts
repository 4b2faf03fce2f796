import { BehindError, UsageError } from '../errors.js';
import { statusOf } from '../state/status/status.js';
import { formatPrometheus, prometheusWithoutState } from '../state/status/status-prometheus.js';
import { behindMessage, formatText, settleLines } from '../state/status/status-report.js';
import { defaultDay } from '../window/day-mode.js';
import { yesterday } from '../window/days.js';
import { nowOf } from './clock.js';
import type { CommandAction } from './declaration.js';
import { withExistingState } from './existing-state.js';
import type { STATUS_OPTIONS } from './status-options.js';

export const statusAction: CommandAction<typeof STATUS_OPTIONS> = async ({ context, reporter, options }) => {
  if (options.json && options.format !== undefined && options.format !== 'json') {
    throw new UsageError(`--json contradicts --format ${options.format}; pick one`);
  }
  const format = options.json ? 'json' : (options.format ?? 'text');
  const { maxBehind } = options;
  const now = nowOf(context.env);
  const { state, path } = await withExistingState('status', options, { context, reporter, now }, (state, path) =>
    Promise.resolve({ state, path }),
  ).catch((error: unknown) => {
    // `> file.prom` has already emptied the file: a sample saying so keeps the metrics from silently vanishing.
    if (format === 'prometheus') context.stdout.write(prometheusWithoutState());
    throw error;
  });
  const statuses = statusOf(state, now, maxBehind);
  const lastRun = state.lastRun();
  if (format === 'json') {
    context.stdout.write(
      `${JSON.stringify({ state: path, days: state.dayMode, yesterday: yesterday(now), latestDayOver: defaultDay(state.dayMode, now), maxBehind: maxBehind ?? null, metrics: statuses, lastRun: lastRun ?? null })}\n`,
    );
  } else if (format === 'prometheus') {
    context.stdout.write(formatPrometheus(statuses, lastRun));
  } else {
    context.stdout.write(
      `${formatText(statuses, lastRun)}days: ${state.dayMode === 'utc' ? 'UTC (--days utc)' : 'store-local (--days local)'}\n` +
        settleLines(statuses, stateFlagsOf(options)),
    );
  }
  const behind = statuses.filter((status) => status.behind);
  if (behind.length > 0) throw new BehindError(behindMessage(behind, maxBehind));
};

/** The flags that name this state on another command line, so a suggested `accept` works as printed. */
function stateFlagsOf(options: {
  readonly output: { readonly output: string | undefined };
  readonly state: string | undefined;
  readonly s3ForcePathStyle: boolean;
}): string {
  const quote = (word: string): string => (/^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
  return [
    ...(options.output.output === undefined ? [] : [` -o ${quote(options.output.output)}`]),
    ...(options.state === undefined ? [] : [` --state ${quote(options.state)}`]),
    ...(options.s3ForcePathStyle ? [' --s3-force-path-style'] : []),
  ].join('');
}
