import { awsCredentialsIn, ObjectStores } from '../destination/object-stores.js';
import { databaseCredentials, openDestination } from '../destination/open.js';
import type { ImportConfig } from '../import/config.js';
import { importMetrics } from '../import/import-run.js';
import { describeImport } from '../import/invocation.js';
import { useColor } from '../log/logger.js';
import { createImportProgress } from '../log/progress.js';
import { DESCRIPTORS, METRICS } from '../metrics/descriptors.js';
import type { Credential } from '../redact.js';
import { clockOf } from './clock.js';
import { SECRET_FLAG_WARNING } from './credentials.js';
import type { CommandAction } from './declaration.js';
import { resolveImportConfig } from './import-config.js';
import type { IMPORT_OPTIONS, ImportCommandName } from './import-options.js';
import { keepSecrets } from './preamble.js';

/** The composition root of an import: config, logs and reporter, object stores and the destination; then `importMetrics` runs it. */
export function importAction(command: ImportCommandName): CommandAction<typeof IMPORT_OPTIONS> {
  return async ({ context, reporter, options, given }) => {
    const config = await resolveImportConfig({ values: options, given }, context.env, command === 'all' ? DESCRIPTORS.length : 1);
    const credentials = credentialsOf(config, context.env);
    const color = useColor(context.stderr, context.env);
    const progress = await createImportProgress(context.stderr, { ...config.log, credentials, color });
    // The one preamble's redactor; the logger is the progress reporter's (a spinner on a terminal).
    const redact = keepSecrets({ context, reporter, credentials });
    reporter.use({ logger: progress.logger });
    const stores = new ObjectStores({
      env: context.env,
      forcePathStyle: config.output.s3ForcePathStyle,
      retries: config.api.retries,
      timeoutMs: config.api.timeoutMs,
      logger: progress.logger,
    });
    const database = { env: context.env, retries: config.api.retries, logger: progress.logger, command, signal: context.signal };
    const destination = openDestination(config.output.destination, { stores, stdout: context.stdout, database });
    try {
      const run = describeImport(command, config, !config.dryRun && config.api.secretOnCommandLine ? SECRET_FLAG_WARNING : undefined);
      const world = {
        stdout: context.stdout,
        env: context.env,
        signal: context.signal,
        ...(context.clock ? { clock: context.clock } : {}),
        now: clockOf(context.env),
      };
      await importMetrics(command === 'all' ? DESCRIPTORS : [METRICS[command]], config, run, {
        ...world,
        progress,
        redact,
        failed: (code) => reporter.failed(code),
        destination,
        stores,
      });
    } finally {
      // The SDK and a database keep connections open; the process must be free to end.
      stores.close();
      await destination.close();
    }
  };
}

/** Every secret the run holds, so that no log line, manifest or lineage event can show one. */
function credentialsOf(config: ImportConfig, env: NodeJS.ProcessEnv): Credential[] {
  return [
    ...(config.dryRun ? [] : [{ clientId: config.api.credentials.clientId, secret: config.api.credentials.clientSecret }]),
    ...awsCredentialsIn(env),
    ...(config.output.lineage?.apiKey === undefined ? [] : [{ secret: config.output.lineage.apiKey }]),
    ...databaseCredentials(config.output.destination, env),
  ];
}
