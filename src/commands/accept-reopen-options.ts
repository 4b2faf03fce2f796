import { METRIC_OR_ALL } from '../metrics/names.js';
import type { OptionValues } from './options.js';
import { STATE_LOCATION_OPTIONS } from './shared-options.js';
import { WINDOW_OPTIONS } from './window-flags.js';

export const DAY_OPTIONS = {
  date: { ...WINDOW_OPTIONS.date, description: 'one day: UTC, or store-local where the output keeps local days (--days local)' },
  from: { ...WINDOW_OPTIONS.from, description: 'first day of a range (UTC, or store-local as --date)' },
  to: { ...WINDOW_OPTIONS.to, description: 'last UTC day of the range, inclusive' },
  ...STATE_LOCATION_OPTIONS,
};

export type DayOptions = OptionValues<typeof DAY_OPTIONS>;

export type DayAction = 'accept' | 'reopen';

export const DAY_HELP = `
<metric> is ${METRIC_OR_ALL}.

Examples:
  # a day the vendor will never publish: stop asking for it, and stop status counting it as a gap
  $ area-metrics accept traffic --date 2026-11-05 -o /data/area-metrics
  # the vendor republished a week: import it again on the next --catch-up
  $ area-metrics reopen all --from 2026-11-01 --to 2026-11-07 -o /data/area-metrics
  # the same, for a state kept in a bucket beside the data
  $ area-metrics reopen all --from 2026-11-01 --to 2026-11-07 -o s3://my-bucket/area-metrics

Exit codes: 0 done, 2 bad options, no state, or a day not over yet (a database: also no such database or schema);
with a state in a bucket or a database also 3 (the AWS credentials or the database role rejected), 4 (the store or
the server unreachable after retries) and 7 (the store or the database refused the write).`;
