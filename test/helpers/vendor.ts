import { afterAll, afterEach, beforeAll } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { stopAllClis } from './cli.js';
import { liveView } from './live-view.js';

/**
 * The vendor of the end-to-end tests: the sandbox of a test file, the client secret its runs are given, and the
 * arguments of an import from it.
 */

/** The UTC offsets of the sandbox's first 14 stores, in store order (S001 first): from -11:00 to +13:00. */
export const SANDBOX_STORE_OFFSETS = [
  '+02:00',
  '+00:00',
  '-05:00',
  '+05:30',
  '+01:00',
  '-08:00',
  '+09:00',
  '+05:45',
  '-03:30',
  '+10:00',
  '-03:00',
  '+08:00',
  '-11:00',
  '+13:00',
] as const;

/** The client secret of a test's sandbox (unless the test needs one of its own). */
export const VENDOR_SECRET = 'Vendor-S3cret-e2e-7f01';

/** The secret in the run's environment, as the README teaches: a flag would add its warning to every run. */
export const SECRET_ENV: Readonly<Record<string, string>> = { AREA_METRICS_CLIENT_SECRET: VENDOR_SECRET };

/** The sandbox of a file: call it (`sandbox()`) or read it (`sandbox.url`); both are the started one. */
export type UsedSandbox = Sandbox & (() => Sandbox);

/**
 * The sandbox of a test file (`clientSecret` VENDOR_SECRET unless given), started before its tests and closed after
 * them; after each test the CLIs still running are stopped and its faults and publishing reset.
 */
export function useSandbox(options: SandboxOptions = {}): UsedSandbox {
  let started: Sandbox | undefined;
  beforeAll(async () => {
    started = await startSandbox({ clientSecret: VENDOR_SECRET, ...options });
  });
  afterEach(async () => {
    await stopAllClis();
    started?.setFaults({});
    started?.setPublishing({});
  });
  afterAll(async () => {
    await started?.close();
  });
  const current = (): Sandbox => {
    if (started === undefined) throw new Error('the sandbox is started before the tests');
    return started;
  };
  return liveView(current);
}

/** Where a run imports from: the sandbox, or a crafted server and the client id it expects. */
export interface VendorAt {
  readonly url: string;
  readonly clientId: string;
}

/** `<metric> --base-url <url> --client-id <id> -o <out> ...extra`: an import from the vendor, secret in the env. */
export function importArgs(vendor: VendorAt, metric: string, out: string, ...extra: string[]): string[] {
  return [metric, '--base-url', vendor.url, '--client-id', vendor.clientId, '-o', out, ...extra];
}
