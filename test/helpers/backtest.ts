import { expect } from 'vitest';
import type { MetricSummary } from '../../src/backtest/report.js';
import type { CliOptions, CliResult } from './cli.js';

/** What `backtest --json` prints: a summary per metric. */
export interface BacktestJson {
  readonly metrics: readonly MetricSummary[];
}

/** A command line run to its end, as `runCli` of cli.ts or of `clockedCli`. */
export type RunCli = (args: readonly string[], options?: CliOptions) => Promise<CliResult>;

/** `backtest ...args --json` in this process: exit 0 expected, its report parsed. */
export async function backtestJson(runCli: RunCli, args: readonly string[], options: CliOptions = {}): Promise<BacktestJson> {
  const result = await runCli(['backtest', ...args, '--json'], { timeoutMs: 60_000, ...options });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as BacktestJson;
}
