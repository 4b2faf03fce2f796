import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { createLogger } from '../log/logger.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { isObjectUrl, objectKey, parseObjectUrl } from '../output/object-location.js';
import type { ObjectStore, ObjectStoreConfig } from '../output/object-store.js';
import { createRedactor } from '../redact.js';
import { ImportState } from '../state/import-state.js';
import { ObjectStateStorage } from '../state/object-state.js';
import { STATE_FILE_NAME } from '../state/state-file.js';
import { FileStateStorage, type StateStorage } from '../state/storage.js';
import type { CommandRun } from './declaration.js';
import { IMPORT_OPTIONS } from './import-options.js';

/**
 * Where a command's state lives: `--state` (a file or `s3://bucket/key`) if given, otherwise beside the output
 * (`<dir>/.area-metrics-state.json` or the object `<prefix>/.area-metrics-state.json`); undefined for stdout
 * without `--state`.
 */
export function stateUrlOf(output: string, state: string | undefined): string | undefined {
  if (state !== undefined) return state;
  if (output === '-') return undefined;
  if (!isObjectUrl(output)) return join(output, STATE_FILE_NAME);
  const location = parseObjectUrl(output, '-o/--output');
  return `s3://${location.bucket}/${objectKey(location, STATE_FILE_NAME)}`;
}

/** The storage for a state URL: a file under a lock, or an object changed by conditional writes. */
export async function stateStorageFor(url: string, stores: ObjectStores): Promise<StateStorage> {
  if (!isObjectUrl(url)) return new FileStateStorage(url);
  const { bucket, prefix } = parseObjectUrl(url, '--state');
  return new ObjectStateStorage(await stores.get(bucket), prefix);
}

/**
 * The object stores of one command, one per bucket (data and state may live in different buckets), closed together
 * at the end. The AWS SDK is loaded only when an s3:// URL is used: a run into a folder never pays for it.
 */
export class ObjectStores {
  private readonly stores = new Map<string, ObjectStore>();

  constructor(private readonly config: ObjectStoreConfig) {}

  async get(bucket: string): Promise<ObjectStore> {
    let store = this.stores.get(bucket);
    if (store === undefined) {
      const { ObjectStore } = await import('../output/object-store.js');
      store = ObjectStore.create(bucket, this.config);
      this.stores.set(bucket, store);
    }
    return store;
  }

  /** Closes the SDK's connections, so the process is free to end. */
  close(): void {
    for (const store of this.stores.values()) store.close();
    this.stores.clear();
  }
}

/** The AWS credentials in the environment, so that no log or error line can show them, whatever a message quotes. */
export function awsCredentialsIn(env: NodeJS.ProcessEnv): { secret: string }[] {
  return ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_ACCESS_KEY_ID'].flatMap((name) => {
    const value = env[name];
    return value === undefined || value === '' ? [] : [{ secret: value }];
  });
}

/**
 * Opens the existing state a command reads or settles, wherever it lives (a folder, a bucket, `--state`), runs
 * `use` with it, and closes the store's connections. No state there is a usage error. `now` is the command's clock
 * (`AREA_METRICS_NOW` in tests), as the import that wrote the state had: a day it recorded is not in the future.
 */
export async function withExistingState<T>(
  command: string,
  options: { readonly output: string; readonly state: string | undefined; readonly s3ForcePathStyle: boolean },
  { context, reporter, now }: Pick<CommandRun, 'context' | 'reporter'> & { readonly now: Date },
  use: (state: ImportState, location: string) => Promise<T>,
): Promise<T> {
  const url = stateUrlOf(options.output, options.state);
  if (url === undefined) throw new UsageError(`${command} uses a folder's state; with -o - pass --state <file>`);
  const credentials = awsCredentialsIn(context.env);
  reporter.use({ redact: createRedactor(credentials) });
  const logger = createLogger({ stream: context.stderr, format: 'text', level: 'warn', credentials });
  const stores = new ObjectStores({
    env: context.env,
    forcePathStyle: options.s3ForcePathStyle,
    retries: IMPORT_OPTIONS.retries.default,
    timeoutMs: IMPORT_OPTIONS.timeout.default,
    logger,
  });
  try {
    const state = await ImportState.loadExisting(await stateStorageFor(url, stores), { now, metricNames: METRIC_NAMES });
    for (const warning of state.warnings) logger.warn(warning);
    return await use(state, url);
  } finally {
    stores.close();
  }
}
