import type { Dispatcher } from 'undici';
import { messageOf } from '../errors.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { fetchBuffered } from '../fetch/exchange.js';
import { networkReason } from '../fetch/failure-words.js';
import type { Logger } from '../log/logger.js';
import type { LineageSettings } from './settings.js';

/** The most a run waits on the lineage server, over all its events. */
export const LINEAGE_BUDGET_MS = 5_000;

/** A lineage server's answer is not read beyond this. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface LineageClientOptions {
  readonly settings: LineageSettings;
  /** Where the proxy variables are read. */
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** The most the run waits on the server, in all (default 5 s); tests make it short. */
  readonly budgetMs?: number;
}

/**
 * Posts one run's events: the first in the background while the run works, the last awaited, each within what is
 * left of the budget. Lineage is never worth failing or stalling an import for: a server that is down, slow or
 * refusing costs one warning, the events after it are dropped, and nothing is thrown.
 */
export class LineageClient {
  private readonly budgetMs: number;
  private readonly dispatcher: Dispatcher;
  private first: Promise<void> | undefined;
  private waitedMs = 0;
  private failed = false;

  constructor(private readonly options: LineageClientOptions) {
    this.budgetMs = options.budgetMs ?? LINEAGE_BUDGET_MS;
    this.dispatcher = createDispatcher({ connections: 2, timeoutMs: this.budgetMs, env: options.env });
  }

  /** Posts the run's first event without waiting for it (the run goes on meanwhile). */
  begin(event: Record<string, unknown>): void {
    this.first = this.post(event, this.budgetMs);
  }

  /**
   * Waits for the first event (counted against the budget), then posts the last one with what is left of the budget,
   * and lets go of the connections. Never throws.
   */
  async end(event: Record<string, unknown>): Promise<void> {
    try {
      const waiting = performance.now();
      await this.first;
      this.waitedMs += performance.now() - waiting;
      if (this.failed) return;
      // Timers take whole milliseconds.
      const left = Math.floor(this.budgetMs - this.waitedMs);
      if (left <= 0) {
        this.warn(event, `no time left of the ${this.seconds(this.budgetMs)} a run gives lineage`);
        return;
      }
      const posting = performance.now();
      await this.post(event, left);
      this.waitedMs += performance.now() - posting;
    } finally {
      // Not `close`, which would wait for a slow server's sockets.
      await this.dispatcher.destroy().catch(() => {});
    }
  }

  private async post(event: Record<string, unknown>, timeoutMs: number): Promise<void> {
    if (this.failed) return;
    const { settings } = this.options;
    try {
      const response = await fetchBuffered(
        {
          method: 'POST',
          url: settings.endpoint,
          headers: {
            'content-type': 'application/json',
            ...(settings.apiKey === undefined ? {} : { authorization: `Bearer ${settings.apiKey}` }),
          },
          body: JSON.stringify(event),
        },
        { signal: AbortSignal.timeout(timeoutMs), dispatcher: this.dispatcher, maxBodyBytes: MAX_ANSWER_BYTES },
      );
      if (response.status < 200 || response.status > 299) this.warn(event, `it answered HTTP ${response.status}`);
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      this.warn(
        event,
        timedOut ? `no answer within ${this.seconds(timeoutMs)}` : networkReason(error, { codeOnly: true }) || messageOf(error),
      );
    }
  }

  private warn(event: Record<string, unknown>, why: string): void {
    if (this.failed) return;
    this.failed = true;
    const { endpoint } = this.options.settings;
    this.options.logger.warn(
      `OpenLineage: cannot post the ${String(event.eventType)} event to ${endpoint.origin}${endpoint.pathname}: ${why}; ` +
        'the import goes on, and this run sends no more lineage events',
      { lineage_endpoint: `${endpoint.origin}${endpoint.pathname}` },
    );
  }

  private seconds(ms: number): string {
    return `${(ms / 1000).toFixed(1)} s`;
  }
}
