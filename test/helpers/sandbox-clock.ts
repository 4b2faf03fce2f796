import type { SandboxOptions } from '../../src/sandbox/index.js';
import { runCli, startCli, startInProcess, type CliOptions } from './cli.js';
import { SECRET_ENV, useSandbox, type UsedSandbox } from './vendor.js';

/**
 * Sandbox options for tests about something other than when a day ends (catch-up, state, concurrent runs): the
 * sandbox serves store-local days still running (yesterday's UTC window always holds some until 23:00Z), and its
 * clock stays at `at` (default: the moment this is called), so those days' values, which change every hour, do not
 * change between an import and the check of it.
 */
export function servingDaysInProgress(at = new Date()): Pick<SandboxOptions, 'serveInProgress' | 'now'> {
  return { serveInProgress: true, now: () => at };
}

/**
 * Noon (UTC) of today: a clock at which the day before yesterday is over (a UTC day is over 25 hours after its end,
 * when every local day it holds has ended) and yesterday is not, whatever the hour the tests run at.
 */
export function noonToday(): Date {
  return new Date(`${new Date().toISOString().slice(0, 10)}T12:00:00Z`);
}

/** The environment that sets the binary's clock to `at`, so that it and the sandbox agree on when days end. */
export function clockEnv(at: Date): { readonly AREA_METRICS_NOW: string } {
  return { AREA_METRICS_NOW: at.toISOString() };
}

/**
 * `runCli`, `startCli` and `startInProcess` with the command's clock at `at`, and `env` (e.g. the client secret) in
 * its environment.
 */
export function clockedCli(
  at: Date,
  env: Readonly<Record<string, string>> = {},
): { runCli: typeof runCli; startCli: typeof startCli; startInProcess: typeof startInProcess } {
  const withClock = <Options extends CliOptions>(options: Options): Options => ({
    ...options,
    env: { ...clockEnv(at), ...env, ...options.env },
  });
  return {
    runCli: (args, options = {}) => runCli(args, withClock(options)),
    startCli: (args, options = {}) => startCli(args, withClock(options)),
    startInProcess: (args, options = {}) => startInProcess(args, withClock(options)),
  };
}

/** The UTC day `n` days before `clock`, as `YYYY-MM-DD`: the days a test at that clock imports. */
export function daysBefore(clock: Date): (n: number) => string {
  return (n) => new Date(clock.getTime() - n * 86_400_000).toISOString().slice(0, 10);
}

// The sandbox's lifecycle lives with the rest of the vendor kit; tests that import it from here still find it.
export { useSandbox };

/** A file's sandbox with its clock stopped, and the command line at the same clock with the vendor's secret. */
export interface StoppedSandbox extends ReturnType<typeof clockedCli> {
  /** The clock of the sandbox and of every run: noon today (`noonToday`) unless given. */
  readonly clock: Date;
  /** The UTC day `n` days before the clock. */
  readonly daysAgo: (n: number) => string;
  readonly sandbox: UsedSandbox;
}

/**
 * `useSandbox` with its clock stopped at `at` (default noon today: the day before yesterday is over, yesterday is
 * not), and `runCli`, `startCli` and `startInProcess` at that clock with the sandbox's secret in their environment:
 * what a test of days already over needs, whatever the hour it runs at.
 */
export function useStoppedSandbox(options: SandboxOptions = {}, at: Date = noonToday()): StoppedSandbox {
  const sandbox = useSandbox({ now: () => at, ...options });
  return { clock: at, daysAgo: daysBefore(at), sandbox, ...clockedCli(at, SECRET_ENV) };
}
