import { FAULT_NAMES } from '../backtest/faults.js';
import { METRIC_OR_ALL } from '../metrics/names.js';
import { oneOf, switchOption, valueOption, type OptionValues } from './options.js';
import { STATE_LOCATION_OPTIONS } from './shared-options.js';
import { WINDOW_OPTIONS } from './window-flags.js';

export const BACKTEST_OPTIONS = {
  ...STATE_LOCATION_OPTIONS,
  from: { ...WINDOW_OPTIONS.from, description: 'first day to replay (default: the first day the output holds)' },
  to: { ...WINDOW_OPTIONS.to, defaultText: 'the last day it holds', description: 'last day to replay, inclusive' },
  inject: valueOption({
    flags: '--inject <fault>',
    parse: oneOf(FAULT_NAMES),
    choices: FAULT_NAMES,
    description:
      'break a day every 11 days on purpose (one store for dark, tenth, five-times; every store for half-day) and count the ones held',
  }),
  json: switchOption({ flags: '--json', description: 'one JSON object on stdout' }),
};

export type BacktestOptions = OptionValues<typeof BACKTEST_OPTIONS>;

export const BACKTEST_HELP = `
<metric> is ${METRIC_OR_ALL}.

Replays the rule that holds days whose numbers look wrong (--on-suspect) over the data already imported, night by
night as the nightly imports judged it, without a request and without writing anything. It reports the days and stores
it would hold and why, and the hold rate: the share of nights with a held day, and of store-days. Run it before
switching --on-suspect hold on, and when a hold is in doubt. --inject breaks a day every 11 days (after 4 weeks of
history) on purpose, one store picked by the day, and counts how many of those faults it holds and how late.

Examples:
  $ area-metrics backtest all -o /data/area-metrics
  $ area-metrics backtest traffic -o /data/area-metrics --from 2026-01-01 --to 2026-06-30
  $ area-metrics backtest all -o /data/area-metrics --inject dark --json
  $ area-metrics backtest all -o s3://my-bucket/area-metrics
  $ area-metrics backtest all -o 'postgresql://loader@db.example.com/analytics?schema=area_metrics'

Exit codes: 0 done (holds are findings, not failures), 2 bad options, no state or no data to replay; with a bucket
or a database also 3 (credentials rejected), 4 (unreachable after retries) and 7 (a read refused).`;
