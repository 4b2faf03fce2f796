import type { ImportCommandName } from './command-list.js';
import type { CommandDeclaration } from './declaration.js';
import { IMPORT_OPTIONS } from './import-options.js';

function help(name: string): string {
  return `
Examples:
  # yesterday (UTC), from cron; credentials from the environment
  $ area-metrics ${name} --base-url https://api.example.com
  # backfill a range into NDJSON files
  $ area-metrics ${name} --from 2026-11-01 --to 2026-11-07 -f ndjson -o ./data
  # typed Parquet files for a warehouse (files only)
  $ area-metrics ${name} --from 2026-11-01 --to 2026-11-07 -f parquet -o ./data
  # nightly: each metric from its own last complete day, plus 2 days again for late corrections
  $ area-metrics ${name} --catch-up --lookback 2
  # into an S3-compatible bucket, the state beside the data (credentials from the AWS SDK's default chain)
  $ area-metrics ${name} --catch-up -o s3://my-bucket/area-metrics
  # partitions a lake reads as columns (metric=.../dt=...), lineage events to Marquez
  $ OPENLINEAGE_URL=http://marquez:5000 area-metrics ${name} --catch-up --layout hive -f parquet -o s3://my-bucket/area-metrics
  # stream to another tool
  $ area-metrics ${name} --date 2026-11-20 -o - | jq -c .

Exit codes: 0 every unit imported, 2 bad options or configuration, 3 credentials rejected, 4 API unreachable or
failing after retries, 5 data contract violation, 6 incomplete data after re-fetching, 7 output could not be
written, 130/143 interrupted (SIGINT/SIGTERM); with failed units, the code of the first in (metric, day, store) order.
`;
}

/** An import command's options, help and action: `name` is the metric, or all of them. */
export function importDeclaration(name: ImportCommandName): CommandDeclaration {
  return {
    options: IMPORT_OPTIONS,
    help: help(name),
    // HTTP, decoding, sinks and state are loaded only when an import runs, not for --help.
    action: async () => (await import('./import.js')).importAction(name),
  };
}
