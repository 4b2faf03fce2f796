import { integer, oneOf, switchOption, valueOption, type OptionValues } from './options.js';
import { STATE_LOCATION_OPTIONS } from './shared-options.js';

const STATUS_FORMATS = ['text', 'json', 'prometheus'] as const;

export const STATUS_OPTIONS = {
  ...STATE_LOCATION_OPTIONS,
  maxBehind: valueOption({
    flags: '--max-behind <n>',
    parse: integer(0, 99_999, 'a whole number of days'),
    description: 'exit 8 when a metric is more than n days behind yesterday (UTC), or has a gap',
  }),
  json: switchOption({ flags: '--json', description: 'one JSON object on stdout (same as --format json)' }),
  format: valueOption({
    flags: '--format <format>',
    parse: oneOf(STATUS_FORMATS),
    choices: STATUS_FORMATS,
    defaultText: 'text',
    description: 'text, json, or prometheus (node_exporter textfile collector)',
  }),
};

export type StatusOptions = OptionValues<typeof STATUS_OPTIONS>;

export const STATUS_HELP = `
Exit codes: 0 fine, 8 a metric is more than --max-behind days behind or has a gap, 2 no or unusable state (a
database: also no such database or schema); with a state in a bucket or a database also 3 (the AWS credentials or the
database role rejected) and 4 (the store or the server unreachable after retries).

Examples:
  $ area-metrics status -o /data/area-metrics
  $ area-metrics status -o /data/area-metrics --max-behind 1 || echo behind | mail -s area-metrics ops@example.com
  $ area-metrics status -o /data/area-metrics --format prometheus > /var/lib/node_exporter/area_metrics.prom
  $ area-metrics status -o s3://my-bucket/area-metrics --max-behind 1

The same days, one row each, for loaders and dbt: the view area_metrics_coverage in PostgreSQL,
_coverage/coverage.parquet in a folder or bucket (docs/coverage.md).`;
