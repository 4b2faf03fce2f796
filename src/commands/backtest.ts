import { backtestOutput } from '../backtest/backtest-output.js';
import { formatBacktest } from '../backtest/report.js';
import { UsageError } from '../errors.js';
import { createCountProgress } from '../log/progress.js';
import { METRICS, METRIC_NAMES } from '../metrics/descriptors.js';
import type { BACKTEST_OPTIONS } from './backtest-options.js';
import { nowOf } from './clock.js';
import type { CommandAction } from './declaration.js';
import { withExistingState } from './existing-state.js';

export const backtestAction: CommandAction<typeof BACKTEST_OPTIONS> = async ({ context, reporter, options, args }) => {
  const argument = args[0] ?? '';
  const names = argument === 'all' ? METRIC_NAMES : METRIC_NAMES.filter((name) => name === argument);
  if (names.length === 0) throw new UsageError(`unknown metric ${JSON.stringify(argument)}; use ${METRIC_NAMES.join(', ')} or all`);
  if (options.from !== undefined && options.to !== undefined && options.from > options.to)
    throw new UsageError(`--from ${options.from} is after --to ${options.to}; swap them`);
  const now = nowOf(context.env);
  const progress = await createCountProgress(context.stderr);
  const summaries = await withExistingState('backtest', options, { context, reporter, now }, (state, _location, _destination, parts) =>
    backtestOutput({
      spec: options.output,
      state,
      parts,
      metrics: names.map((name) => METRICS[name]),
      span: { ...(options.from === undefined ? {} : { from: options.from }), ...(options.to === undefined ? {} : { to: options.to }) },
      ...(options.inject === undefined ? {} : { fault: options.inject }),
      onNight: (metric, done, total) => progress.update(metric, done, total),
    }),
  ).finally(() => progress.stop());
  context.stdout.write(options.json ? `${JSON.stringify({ metrics: summaries })}\n` : formatBacktest(summaries, options.inject));
};
