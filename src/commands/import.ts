import type { Command } from 'commander';
import type { MetricName } from '../metrics/descriptors.js';
import type { CommandContext } from './context.js';
import { IMPORT_OPTIONS } from './import-options.js';
import { addOptions, type CollectedOptions } from './options.js';

const COMMANDS: readonly { name: string; metric: MetricName | 'all'; summary: string }[] = [
  { name: 'unique-users', metric: 'unique-users', summary: 'import the Unique Users metric' },
  { name: 'avg-screen-time', metric: 'avg-screen-time', summary: 'import the Average Screen Time metric' },
  { name: 'traffic', metric: 'traffic', summary: 'import the Area Traffic metric' },
  { name: 'all', metric: 'all', summary: 'import all three metrics in one run' },
];

function examples(name: string): string {
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
`;
}

export function registerImportCommands(program: Command, context: CommandContext): void {
  for (const spec of COMMANDS) {
    const command = program.command(spec.name).description(spec.summary).addHelpText('after', examples(spec.name));
    addOptions(command, IMPORT_OPTIONS).action(async (raw: CollectedOptions) => {
      // The import's code (HTTP, decoding, sinks, state) is loaded only when it runs, not for --help.
      const { runImportCommand } = await import('./import-run.js');
      await runImportCommand(spec.name, spec.metric, raw, context);
    });
  }
}
