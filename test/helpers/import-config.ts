import { silentLogger } from '../../src/log/logger.js';
import { resolveImportConfig } from '../../src/commands/import-config.js';
import type { ImportConfig, RunConfig } from '../../src/import/config.js';
import { IMPORT_OPTIONS } from '../../src/commands/import-options.js';
import { parseOptions, type CollectedOptions } from '../../src/commands/options.js';

/** An import's config from option texts as commander collects them (`--page-size` is `pageSize`), as a run parses them. */
export async function importConfigOf(collected: CollectedOptions, env: NodeJS.ProcessEnv, metricCount: number): Promise<ImportConfig> {
  return resolveImportConfig(parseOptions(IMPORT_OPTIONS, collected, env), env, metricCount);
}

/** The config of a run that sends requests (not --dry-run), or the test fails here. */
export function runConfigOf(config: ImportConfig): RunConfig {
  if (config.dryRun) throw new Error('expected the config of a run, got a --dry-run');
  return config;
}

/** What a destination's database connection gets in a test that writes files: nothing (it never connects). */
export const NO_DATABASE = { env: {}, retries: 0, logger: silentLogger } as const;
