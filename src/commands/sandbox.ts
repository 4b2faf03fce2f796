import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { createLogger, useColor } from '../log/logger.js';
import { DEFAULT_SANDBOX, type Sandbox, type SandboxFaults, type SandboxPublishing } from '../sandbox/types.js';
import type { CommandContext } from './context.js';

/** The CLI's default port: stable for people following the README; `--port 0` picks a free one. */
export const SANDBOX_CLI_DEFAULT_PORT = 8080;

interface SandboxCommandOptions {
  host: string;
  port: number;
  stores: number;
  zones: number;
  days: number;
  seed: number;
  clientId: string;
  clientSecret: string;
  tokenTtl: number;
  latencyMs?: number;
  failNth?: NonNullable<SandboxFaults['failNth']>;
  rateLimitNth?: NonNullable<SandboxFaults['rateLimitNth']>;
  truncateNth?: NonNullable<SandboxFaults['truncateNth']>;
  foreignNextOrigin?: string;
  repeatResult?: boolean;
  tokenLatencyMs?: number;
  tokenFailNth?: NonNullable<SandboxFaults['tokenFailNth']>;
  hideDay?: NonNullable<SandboxPublishing['hidden']>;
  correctDay?: NonNullable<SandboxPublishing['corrected']>;
  publishAfter?: number;
  verbose?: boolean;
}

function integerParser(flag: string, min: number, max: number): (text: string) => number {
  return (text) => {
    const value = /^-?\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new UsageError(`${flag} must be an integer in ${min}..${max} (got "${text}")`);
    }
    return value;
  };
}

/** `A:B[:TIMES]` with integer parts, e.g. `3:503` or `3:503:2`. */
function colonParts(flag: string, text: string, shape: string, required: number): number[] {
  const parts = text.split(':');
  if (parts.length < required || parts.length > required + 1 || parts.some((part) => !/^\d+$/.test(part))) {
    throw new UsageError(`${flag} expects ${shape} (got "${text}")`);
  }
  return parts.map(Number);
}

function failRule(flag: string): (text: string) => { n: number; status: number; times?: number } {
  return (text) => {
    const [n, status, times] = colonParts(flag, text, 'N:STATUS[:TIMES], e.g. 2:503', 2);
    return { n: n!, status: status!, ...(times === undefined ? {} : { times }) };
  };
}

function rateLimitRule(text: string): { n: number; retryAfterSeconds: number; times?: number } {
  const [n, seconds, times] = colonParts('--rate-limit-nth', text, 'N:SECONDS[:TIMES], e.g. 1:2', 2);
  return { n: n!, retryAfterSeconds: seconds!, ...(times === undefined ? {} : { times }) };
}

function truncateRule(text: string): { n: number; times?: number } {
  const [n, times] = colonParts('--truncate-nth', text, 'N[:TIMES], e.g. 2', 1);
  return { n: n!, ...(times === undefined ? {} : { times }) };
}

/** `DAY[:S001,S002]`: a UTC day's window, or only some stores of it; repeatable. */
function hideRule(text: string, previous: NonNullable<SandboxPublishing['hidden']> = []): NonNullable<SandboxPublishing['hidden']> {
  const match = /^(\d{4}-\d{2}-\d{2})(?::(.+))?$/.exec(text);
  if (!match) throw new UsageError(`--hide-day expects DAY[:STORE,STORE...], e.g. 2026-11-20 or 2026-11-20:S001,S003 (got "${text}")`);
  return [...previous, { day: match[1]!, ...(match[2] === undefined ? {} : { stores: match[2].split(',') }) }];
}

/** `DAY[:REVISION]`: the day's values as the vendor corrected them (revision 1 unless given); repeatable. */
function correctRule(text: string, previous: NonNullable<SandboxPublishing['corrected']> = []): NonNullable<SandboxPublishing['corrected']> {
  const match = /^(\d{4}-\d{2}-\d{2})(?::(\d{1,7}))?$/.exec(text);
  if (!match) throw new UsageError(`--correct-day expects DAY[:REVISION], e.g. 2026-11-18 or 2026-11-18:2 (got "${text}")`);
  return [...previous, { day: match[1]!, revision: match[2] === undefined ? 1 : Number(match[2]) }];
}

function publishingFrom(options: SandboxCommandOptions): SandboxPublishing {
  return {
    ...(options.hideDay ? { hidden: options.hideDay } : {}),
    ...(options.correctDay ? { corrected: options.correctDay } : {}),
  };
}

function faultsFrom(options: SandboxCommandOptions): SandboxFaults {
  const faults: SandboxFaults = {};
  if (options.latencyMs !== undefined) faults.latencyMs = options.latencyMs;
  if (options.failNth) faults.failNth = options.failNth;
  if (options.rateLimitNth) faults.rateLimitNth = options.rateLimitNth;
  if (options.truncateNth) faults.truncateNth = options.truncateNth;
  if (options.foreignNextOrigin !== undefined) faults.foreignNextOrigin = options.foreignNextOrigin;
  if (options.repeatResult) faults.repeatResult = true;
  if (options.tokenLatencyMs !== undefined) faults.tokenLatencyMs = options.tokenLatencyMs;
  if (options.tokenFailNth) faults.tokenFailNth = options.tokenFailNth;
  return faults;
}

function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** What the sandbox prints on start; the first line is the one scripts parse. */
export function startBanner(sandbox: Sandbox, options: SandboxCommandOptions, now: Date): string {
  const usesDemoSecret = options.clientSecret === DEFAULT_SANDBOX.clientSecret;
  // A secret the operator chose is never echoed; only the well-known demo secret is.
  const secretShown = usesDemoSecret ? sandbox.clientSecret : '(the one given with --client-secret)';
  const secretArgument = usesDemoSecret ? sandbox.clientSecret : '<secret>';
  const todayStart = Math.floor(now.getTime() / 86_400_000) * 86_400_000;
  const firstDay = utcDay(todayStart - options.days * 86_400_000);
  const lastDay = utcDay(todayStart - 86_400_000);
  const minimumZones = Math.ceil(options.zones / 2);
  const faults = JSON.stringify(sandbox.faults());
  const publishing = JSON.stringify(sandbox.publishing());
  return [
    `sandbox listening on ${sandbox.url}`,
    `client id:     ${sandbox.clientId}`,
    `client secret: ${secretShown}`,
    `token URL:     ${sandbox.url}/oauth2/token`,
    `data:          ${options.stores} stores, ${minimumZones}-${options.zones} zones each, UTC days ${firstDay}..${lastDay}, seed ${options.seed}`,
    ...(faults === '{}' ? [] : [`faults:        ${faults}`]),
    ...(publishing === '{}' ? [] : [`publishing:    ${publishing}`]),
    `try:           area-metrics all --base-url ${sandbox.url} --client-id ${sandbox.clientId} --client-secret ${secretArgument} -o ./demo-data`,
    'stop with Ctrl-C (SIGINT) or SIGTERM',
    '',
  ].join('\n');
}

async function runSandbox(options: SandboxCommandOptions, context: CommandContext): Promise<void> {
  const logger = createLogger({
    stream: context.stderr,
    format: 'text',
    level: options.verbose ? 'debug' : 'info',
    credentials: [{ clientId: options.clientId, secret: options.clientSecret }],
    color: useColor(context.stderr, context.env),
  });
  let sandbox: Sandbox;
  try {
    // Loaded on demand, so the import commands that cron starts every night do not pay for the emulator.
    const { startSandbox } = await import('../sandbox/server.js');
    sandbox = await startSandbox({
      host: options.host,
      port: options.port,
      stores: options.stores,
      zones: options.zones,
      days: options.days,
      seed: options.seed,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      tokenTtlSeconds: options.tokenTtl,
      faults: faultsFrom(options),
      publishing: publishingFrom(options),
      onRequest: (request) => {
        const query = new URLSearchParams(request.query).toString();
        logger.debug(`${request.method} ${request.path}${query ? `?${query}` : ''} -> ${request.status}`);
      },
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new UsageError(
        `cannot listen on ${options.host}:${options.port} (${code}); choose another --port (0 picks a free one) or --host`,
      );
    }
    throw error;
  }
  context.stdout.write(startBanner(sandbox, options, new Date()));
  // The vendor publishes what it held back: the hidden windows appear, corrections stay.
  const publishTimer =
    options.publishAfter === undefined
      ? undefined
      : setTimeout(() => {
          const { hidden: _published, ...rest } = sandbox.publishing();
          sandbox.setPublishing(rest);
          logger.info('published the hidden windows (--publish-after)');
        }, options.publishAfter * 1000);
  // A signal is the normal way to stop the sandbox: wait for it, close cleanly and return normally.
  await new Promise<void>((resolve) => {
    if (context.signal.aborted) resolve();
    else context.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  clearTimeout(publishTimer);
  await sandbox.close();
  logger.info(`sandbox stopped after ${sandbox.requests.length} requests`);
}

/** The whole-number options of the data set and the listener: one row each drives commander and the help. */
const INTEGER_OPTIONS: readonly { flags: string; description: string; fallback: number; min: number; max: number }[] = [
  { flags: '--port <port>', description: 'port to listen on (0 = any free port, printed on start)', fallback: SANDBOX_CLI_DEFAULT_PORT, min: 0, max: 65_535 },
  { flags: '--stores <n>', description: 'number of stores (S001, S002, ...)', fallback: DEFAULT_SANDBOX.stores, min: 1, max: 1_000_000 },
  { flags: '--zones <n>', description: 'most zones per store (each store has between half of it and it)', fallback: DEFAULT_SANDBOX.zones, min: 1, max: 1000 },
  { flags: '--days <n>', description: 'UTC days with data, ending yesterday (UTC)', fallback: DEFAULT_SANDBOX.days, min: 1, max: 3660 },
  { flags: '--seed <n>', description: 'seed of the synthetic data (same seed, same data)', fallback: DEFAULT_SANDBOX.seed, min: 0, max: 2 ** 31 - 1 },
];

export function registerSandboxCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('sandbox')
    .description('run a local emulator of the metrics API and its auth server, with deterministic synthetic data')
    .option('--host <host>', 'interface to listen on', DEFAULT_SANDBOX.host);
  for (const spec of INTEGER_OPTIONS) {
    const name = spec.flags.split(' ')[0] as string;
    command.addOption(new Option(spec.flags, spec.description).default(spec.fallback).argParser(integerParser(name, spec.min, spec.max)));
  }
  command
    .option('--client-id <id>', 'accepted client id (Basic auth user and OAuth client)', DEFAULT_SANDBOX.clientId)
    .option('--client-secret <secret>', 'accepted client secret', DEFAULT_SANDBOX.clientSecret)
    .addOption(
      new Option('--token-ttl <seconds>', 'expires_in and JWT lifetime of issued tokens')
        .default(DEFAULT_SANDBOX.tokenTtlSeconds)
        .argParser(integerParser('--token-ttl', 1, 31_536_000)),
    )
    .addOption(
      new Option('--latency-ms <ms>', 'fault: delay every metric request').argParser(
        integerParser('--latency-ms', 0, 600_000),
      ),
    )
    .addOption(
      new Option('--fail-nth <N:STATUS[:TIMES]>', 'fault: the Nth metric request (and TIMES-1 more) answers STATUS').argParser(
        failRule('--fail-nth'),
      ),
    )
    .addOption(
      new Option('--rate-limit-nth <N:SECONDS[:TIMES]>', 'fault: the Nth metric request answers 429 with Retry-After').argParser(
        rateLimitRule,
      ),
    )
    .addOption(
      new Option('--truncate-nth <N[:TIMES]>', 'fault: the Nth metric request answers 200 with a truncated JSON body').argParser(
        truncateRule,
      ),
    )
    .option('--foreign-next-origin <origin>', 'fault: next/previous links point at this origin (a misconfigured proxy)')
    .option('--repeat-result', 'fault: each page after the first repeats a result of the previous page and omits one')
    .addOption(
      new Option('--token-latency-ms <ms>', 'fault: delay every token request').argParser(
        integerParser('--token-latency-ms', 0, 600_000),
      ),
    )
    .addOption(
      new Option('--token-fail-nth <N:STATUS[:TIMES]>', 'fault: the Nth token request answers STATUS').argParser(
        failRule('--token-fail-nth'),
      ),
    )
    .addOption(
      new Option('--hide-day <DAY[:STORES]>', 'late vendor: the UTC day\'s window (or these comma-separated stores of it) is not published yet; repeatable').argParser(
        hideRule,
      ),
    )
    .addOption(
      new Option('--correct-day <DAY[:REVISION]>', 'late vendor: the UTC day\'s values as corrected after publishing (revision 1 unless given); repeatable').argParser(
        correctRule,
      ),
    )
    .addOption(
      new Option('--publish-after <seconds>', 'late vendor: publish the --hide-day windows this many seconds after start').argParser(
        integerParser('--publish-after', 0, 86_400),
      ),
    )
    .option('-v, --verbose', 'log every request on stderr')
    .addHelpText(
      'after',
      `
The first stdout line is "sandbox listening on <base URL>"; scripts can parse it.
Metrics: GET <base>/api/bi/area-metrics/{unique-users,avg-screen-time,traffic}/ (Basic auth).
Token:   POST <base>/oauth2/token (client credentials).  Admin (loopback only): POST <base>/_sandbox/faults
         with a JSON body of fault switches, GET <base>/_sandbox/faults, GET <base>/_sandbox/requests,
         POST <base>/_sandbox/publishing with {"hidden": [...], "corrected": [...]}, GET <base>/_sandbox/publishing.

Examples:
  area-metrics sandbox                                  # port 8080, demo-client / demo-secret
  area-metrics sandbox --port 0 --stores 200 --zones 20 --days 7 --seed 42
  area-metrics sandbox --port 0 --fail-nth 2:503 --rate-limit-nth 4:1
  area-metrics sandbox --port 0 --truncate-nth 1 --repeat-result
  area-metrics sandbox --port 0 --hide-day 2026-11-20:S001,S003 --publish-after 60 --correct-day 2026-11-18
  curl -X POST localhost:8080/_sandbox/faults -d '{"latencyMs": 200}'
  curl -X POST localhost:8080/_sandbox/publishing -d '{"hidden": [{"day": "2026-11-20", "stores": ["S001"]}]}'
  curl -u demo-client:demo-secret 'http://127.0.0.1:8080/api/bi/area-metrics/traffic/?datetime_gte=2026-11-20T00:00:00Z&datetime_lte=2026-11-20T23:59:59Z'`,
    )
    .action(async (options: SandboxCommandOptions) => {
      await runSandbox(options, context);
    });
}
