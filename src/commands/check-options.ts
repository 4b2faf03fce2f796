import type { OptionValues } from './options.js';
import { API_OPTIONS, requestBudgetOptions } from './shared-options.js';

/** The import's URL and credential options, and a shorter request budget: a check answers in seconds or says why not. */
export const CHECK_OPTIONS = {
  ...API_OPTIONS,
  ...requestBudgetOptions({ timeoutSeconds: 30, retries: 1, maxRetries: 20 }),
};

export type CheckOptions = OptionValues<typeof CHECK_OPTIONS>;

export const CHECK_HELP = `
Exit codes: 0 every metric answered, 2 bad options, 3 credentials rejected, 4 URL unreachable or failing,
5 the answer is not the API's.

Examples:
  # once at setup, with the cron job's environment
  $ AREA_METRICS_CLIENT_SECRET_FILE=/etc/area-metrics/secret area-metrics check --base-url https://analytics.vendor.example --client-id acme-retail`;
