import type { Socket } from 'node:net';
import { parseFaults } from './faults.js';
import { parsePublishing, PublishingRules } from './publishing.js';
import type { RequestLog } from './request-log.js';
import type { ServingRules } from './serving.js';
import { SlidingWindowThrottle } from './throttle.js';
import type { SandboxFaults, SandboxPublishing } from './types.js';

/** Everything about a running sandbox that changes while it runs, in one place. */
export class SandboxState implements ServingRules {
  faults: SandboxFaults;
  publishing: PublishingRules;
  publishingGeneration = 0;
  /** Metric requests since the faults were last set (fault rules count from 1). */
  metricOrdinal = 0;
  /** Token requests since the faults were last set. */
  tokenOrdinal = 0;
  /** Token requests since start. */
  tokenCalls = 0;
  /** The requests `faults.rateLimit` has let through lately. */
  throttle = new SlidingWindowThrottle();
  readonly pendingTimers = new Set<NodeJS.Timeout>();
  readonly sockets = new Set<Socket>();

  constructor(
    faults: SandboxFaults,
    publishing: SandboxPublishing,
    readonly serveInProgress: boolean,
    /** The newest requests, kept; the unrouted ones only counted. */
    readonly requests: RequestLog,
  ) {
    this.faults = parseFaults(faults, 'options');
    this.publishing = new PublishingRules(parsePublishing(publishing, 'options'));
  }

  /** Replaces the active faults and restarts their request counting. */
  setFaults(next: unknown, where: string): void {
    this.faults = parseFaults(next, where);
    this.metricOrdinal = 0;
    this.tokenOrdinal = 0;
    this.throttle = new SlidingWindowThrottle();
  }

  /** Replaces the publishing rules; pages cached under the old ones are no longer served. */
  setPublishing(next: unknown, where: string): void {
    this.publishing = new PublishingRules(parsePublishing(next, where));
    this.publishingGeneration += 1;
  }

  /** Waits `milliseconds`; `close` cancels every wait still running. */
  delay(milliseconds: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pendingTimers.delete(timer);
        resolve();
      }, milliseconds);
      this.pendingTimers.add(timer);
    });
  }
}
