import { errnoCode, UsageError } from '../errors.js';
import {
  fieldFlag,
  fieldOptionKey,
  flagFields,
  placeholder,
  SANDBOX_FAULTS,
  type FaultName,
  type FaultRow,
} from '../sandbox/fault-table.js';
import { parseFaults } from '../sandbox/faults.js';
import { DEFAULT_SANDBOX, type Sandbox, type SandboxPublishing } from '../sandbox/types.js';
import { nowOf } from './clock.js';
import type { CommandAction } from './declaration.js';
import { commandLogs } from './preamble.js';
import type { SANDBOX_OPTIONS, SandboxOptions } from './sandbox-options.js';

function publishingFrom(options: SandboxOptions): SandboxPublishing {
  return {
    ...(options.hideDay.length > 0 ? { hidden: [...options.hideDay] } : {}),
    ...(options.correctDay.length > 0 ? { corrected: [...options.correctDay] } : {}),
    ...(options.distortDay.length > 0 ? { distorted: [...options.distortDay] } : {}),
  };
}

/**
 * The faults the flags give, as the fault table names them (checked by the sandbox's schema when it starts, as a body
 * posted to its admin route is): a fault's flag gives its value, or one field of it, the flags of the others theirs.
 */
function faultsFrom(options: SandboxOptions): Record<string, unknown> {
  const faults: Record<string, unknown> = {};
  // The fields' own flags are keyed `<fault>:<field>` in the option table (`fieldOptionKey`).
  const given: Readonly<Record<string, unknown>> = options;
  for (const [name, row] of Object.entries(SANDBOX_FAULTS) as [FaultName, FaultRow][]) {
    const value = given[name];
    const { main, own } = flagFields(row);
    const fields = own.flatMap((field) => {
      const fieldValue = given[fieldOptionKey(name, field)];
      return fieldValue === undefined ? [] : [[field, fieldValue] as const];
    });
    if (value === undefined || value === false) {
      const [field] = fields[0] ?? [];
      if (field !== undefined) throw new UsageError(`${fieldFlag(row, field)} needs ${row.flag} ${placeholder(main.spec)}`);
      continue;
    }
    faults[name] = main.field === undefined ? value : { [main.field]: value, ...Object.fromEntries(fields) };
  }
  return faults;
}

function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** What the sandbox prints on start; the first line is the one scripts parse. */
export function startBanner(sandbox: Sandbox, options: SandboxOptions, now: Date): string {
  const usesDemoSecret = options.clientSecret === DEFAULT_SANDBOX.clientSecret;
  // A secret the operator chose is never echoed; only the well-known demo secret is.
  const secretShown = usesDemoSecret ? sandbox.clientSecret : '(the one given with --client-secret)';
  // The suggested command takes the secret from the environment: a flag would show it to every user in `ps`.
  const secretSetting = usesDemoSecret
    ? `AREA_METRICS_CLIENT_SECRET=${sandbox.clientSecret}`
    : 'AREA_METRICS_CLIENT_SECRET_FILE=<secret-file>';
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
    options.serveInProgress
      ? "served:        every store's local day, also while it runs (its values change every hour until it ends)"
      : "served:        a store's local day once it has ended (--serve-in-progress: also while it runs)",
    ...(faults === '{}' ? [] : [`faults:        ${faults}`]),
    ...(publishing === '{}' ? [] : [`publishing:    ${publishing}`]),
    `try:           ${secretSetting} area-metrics all --base-url ${sandbox.url} --client-id ${sandbox.clientId} -o ./demo-data`,
    'stop with Ctrl-C (SIGINT) or SIGTERM',
    '',
  ].join('\n');
}

export const sandboxAction: CommandAction<typeof SANDBOX_OPTIONS> = async ({ context, reporter, options }) => {
  const credentials = [{ clientId: options.clientId, secret: options.clientSecret }];
  const { logger } = commandLogs({ context, reporter, credentials }, { level: options.verbose ? 'debug' : 'info' });
  // The clock the import commands read (set for tests): with it, the sandbox and the importer agree on which local
  // days have ended; without it, the real clock, read on every request.
  const frozen = context.env.AREA_METRICS_NOW ? nowOf(context.env) : undefined;
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
      serveInProgress: options.serveInProgress,
      ...(frozen === undefined ? {} : { now: () => frozen }),
      faults: parseFaults(faultsFrom(options), 'options'),
      publishing: publishingFrom(options),
      onRequest: (request) => {
        const query = new URLSearchParams(request.query).toString();
        logger.debug(`${request.method} ${request.path}${query ? `?${query}` : ''} -> ${request.status}`);
      },
    });
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new UsageError(
        `cannot listen on ${options.host}:${options.port} (${code}); choose another --port (0 picks a free one) or --host`,
      );
    }
    throw error;
  }
  context.stdout.write(startBanner(sandbox, options, frozen ?? new Date()));
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
  logger.info(`sandbox stopped after ${sandbox.requestCounts().received} requests`);
};
