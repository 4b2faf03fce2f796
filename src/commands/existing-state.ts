import { ObjectStores, awsCredentialsIn } from '../destination/object-stores.js';
import type { DestinationSpec } from '../destination/spec.js';
import type { Destination } from '../destination/destination.js';
import type { SessionOptions } from '../destination/postgres/session.js';
import { databaseCredentials, openDestination } from '../destination/open.js';
import { UsageError } from '../errors.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { ImportState } from '../state/import-state.js';
import type { CommandBase } from './declaration.js';
import { commandLogs } from './preamble.js';
import { IMPORT_REQUEST_BUDGET } from './shared-options.js';

/** What a command that reads the output itself (a backtest) needs to open it beside the state. */
export interface ReadParts {
  readonly stores: ObjectStores;
  readonly database: SessionOptions;
}

/**
 * Opens the existing state a command reads or settles, wherever it lives (a folder, a bucket, `--state`), runs
 * `use` with it, and closes the store's connections. No state there is a usage error. `now` is the command's clock
 * (`AREA_METRICS_NOW` in tests), as the import that wrote the state had: a day it recorded is not in the future.
 */
export async function withExistingState<T>(
  command: string,
  options: { readonly output: DestinationSpec; readonly state: string | undefined; readonly s3ForcePathStyle: boolean },
  { context, reporter, now }: CommandBase & { readonly now: Date },
  use: (state: ImportState, location: string, destination: Destination, parts: ReadParts) => Promise<T>,
): Promise<T> {
  const credentials = [...awsCredentialsIn(context.env), ...databaseCredentials(options.output, context.env)];
  const { logger } = commandLogs({ context, reporter, credentials }, { level: 'warn' });
  const stores = new ObjectStores({
    env: context.env,
    forcePathStyle: options.s3ForcePathStyle,
    retries: IMPORT_REQUEST_BUDGET.retries,
    timeoutMs: IMPORT_REQUEST_BUDGET.timeoutSeconds * 1000,
    logger,
  });
  const database = { env: context.env, retries: IMPORT_REQUEST_BUDGET.retries, logger, command, signal: context.signal };
  const destination = openDestination(options.output, { stores, stdout: context.stdout, database });
  try {
    const place = destination.statePlace(options.state);
    if (place === undefined) throw new UsageError(`${command} uses a folder's state; with -o - pass --state <file>`);
    const state = await ImportState.loadExisting(await place.storage(stores), { now, metricNames: METRIC_NAMES });
    for (const warning of state.warnings) logger.warn(warning);
    return await use(state, place.url, destination, { stores, database });
  } finally {
    stores.close();
    await destination.close();
  }
}
