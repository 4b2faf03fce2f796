/** The sandbox: a local emulator of the vendor's metrics API and auth server, with synthetic data. */
export type {
  MetricName,
  RecordedRequest,
  ResultWindow,
  Sandbox,
  SandboxFaults,
  SandboxOptions,
  SandboxPublishing,
} from './types.js';
export { DEFAULT_PAGE_SIZE, DEFAULT_SANDBOX, MAX_PAGE_SIZE, METRIC_NAMES } from './types.js';
export { startSandbox } from './server.js';
export { parseFaults, sandboxFaultsSchema } from './faults.js';
export { parsePublishing, sandboxPublishingSchema } from './publishing.js';
