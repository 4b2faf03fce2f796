import type { VendorDownError } from '../fetch/outage.js';

/** Why a run stopped before its last unit: the output failed, the credentials were rejected, or the vendor is down. */
export type StopReason = 'output' | 'credentials' | 'vendor-down';

/** How a run stopped early, if it did: the reason, and for a vendor found down the error whose message names the cause. */
export interface RunStop {
  readonly stoppedBy?: StopReason;
  readonly stopCause?: VendorDownError;
}

/**
 * The units a run left, in words, once for the summary line (after their count: `59 not attempted: ...`) and once
 * for each of them in the manifest.
 */
export function leftUnits({ stoppedBy, stopCause }: RunStop): { readonly summary: string; readonly manifest: string } {
  // The cause says it: `the API is unreachable or failing: ... and the next request failed the same way (...)`.
  const vendorDown = stopCause?.message ?? 'the API is unreachable or failing';
  switch (stoppedBy) {
    case 'credentials':
      return { summary: 'not attempted: the credentials were rejected', manifest: 'not attempted: the credentials were rejected' };
    case 'vendor-down':
      return { summary: `not attempted, left pending: ${vendorDown}`, manifest: `not attempted: ${vendorDown}` };
    case 'output':
      return { summary: 'not tried, the output could not be written', manifest: 'not tried: the output could not be written' };
    case undefined:
      return { summary: 'not attempted: the run ended before them', manifest: 'not attempted: the run ended before it' };
  }
}
