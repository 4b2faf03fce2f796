import { backtestOutput } from '../backtest/backtest-output.js';
import { formatBacktest } from '../backtest/report.js';
import { UsageError } from '../errors.js';
import { useColor } from '../log/logger.js';
import { createCountProgress } from '../log/progress.js';
import { METRICS } from '../metrics/descriptors.js';
import { metricsNamed } from '../metrics/names.js';
import type { BACKTEST_OPTIONS } from './backtest-options.js';
import { nowOf } from './clock.js';
import type { CommandAction } from './declaration.js';
import { withExistingState } from './existing-state.js';

export const backtestAction: CommandAction<typeof BACKTEST_OPTIONS> = async ({ context, reporter, options, args }) => {
  const argument = args[0] ?? '';
  const names = metricsNamed(argument);
  if (options.from !== undefined && options.to !== undefined && options.from > options.to)
    throw new UsageError(`--from ${options.from} is after --to ${options.to}; swap them`);
  const now = nowOf(context.env);
  const progress = await createCountProgress(context.stderr, useColor(context.stderr, context.env));
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
