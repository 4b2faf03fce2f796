import { hash } from 'node:crypto';
import { BrokerProblem } from '../problem.js';
import type { AttestationKeys, KeysStatus } from './keys.js';
import type { ReplayGuard } from './replay.js';
import type { AttestationSettings } from '../config/attestation-settings.js';
import { CLOCK_SKEW_SECONDS, type AttestationVerifier, type GenuineToken, type RefusalCause } from './verifier.js';

/** The outcome of one request's attestation, as counted in `area_metrics_broker_attestation_total{result}`. */
export const ATTESTATION_RESULTS = ['valid', 'missing', 'invalid', 'other-app', 'replayed', 'no-keys'] as const;
export type AttestationResult = (typeof ATTESTATION_RESULTS)[number];

export interface AttestationVerdict {
  readonly result: AttestationResult;
  /** Why it was refused, from a fixed set: each cause has its own log line once per interval. */
  readonly cause?: RefusalCause;
  /** Why, for the log line (never the token, never a claim's value). */
  readonly reason?: string;
}

/** At most this many genuine tokens are remembered; the oldest makes room. */
const MAX_REMEMBERED = 10_000;

/**
 * Whether a token request comes from a genuine build of the application it names. A genuine token is verified once
 * and remembered by its hash until its `exp` (never longer than its own lifetime, at most 7 days), so that the app's later requests (and the fast path) cost a lookup;
 * with single use, its `jti` is accepted once instead. In enforce mode every other verdict is refused with a problem
 * of its own; in report mode it is only counted and logged.
 */
export class AttestationGate {
  private readonly remembered = new Map<string, GenuineToken>();
  /** The request header, lower-case as Node gives it. */
  readonly header: string;

  constructor(
    private readonly settings: AttestationSettings,
    private readonly verifier: AttestationVerifier,
    private readonly keys: AttestationKeys,
    private readonly replay: ReplayGuard,
    private readonly appIdOf: (application: string) => string | undefined,
    private readonly now: () => number,
  ) {
    this.header = settings.header.toLowerCase();
  }

  get enforced(): boolean {
    return this.settings.mode === 'enforce';
  }

  /**
   * Synchronously: whether the token is remembered as genuine for this application and may be used again (never
   * with single use). The fast path answers such a request itself.
   */
  isRemembered(application: string, headerValue: string | undefined): boolean {
    if (this.settings.singleUse) return false;
    const token = tokenOf(headerValue);
    if (token === undefined) return false;
    const genuine = this.lookup(hash('sha256', token, 'base64url'));
    return genuine !== undefined && genuine.appId === this.appIdOf(application);
  }

  async check(application: string, headerValue: string | undefined): Promise<AttestationVerdict> {
    const token = tokenOf(headerValue);
    if (token === undefined) return { result: 'missing', cause: 'missing' };
    const id = hash('sha256', token, 'base64url');
    let genuine = this.lookup(id);
    if (genuine === undefined) {
      const verified = await this.verifier.verify(token);
      if (verified.kind !== 'genuine') return { result: verified.kind, cause: verified.cause, reason: verified.reason };
      genuine = verified;
      this.remember(id, genuine);
    }
    if (genuine.appId !== this.appIdOf(application)) {
      return { result: 'other-app', cause: 'other app', reason: `${this.settings.appClaim} names another application` };
    }
    if (this.settings.singleUse) {
      if (genuine.jti === undefined) return { result: 'invalid', cause: 'no jti', reason: 'no jti (single use)' };
      // Remembered as long as the token could pass verification: its exp plus the skew allowed.
      if (!(await this.replay.firstUse(genuine.jti, genuine.expiresAt + CLOCK_SKEW_SECONDS * 1000)))
        return { result: 'replayed', cause: 'replayed' };
    }
    return { result: 'valid' };
  }

  /** The refusal of a verdict; undefined when the request goes on (a valid token, or report mode). */
  problemFor(verdict: AttestationVerdict): BrokerProblem | undefined {
    if (!this.enforced || verdict.result === 'valid') return undefined;
    const reason = verdict.reason === undefined ? undefined : `attestation: ${verdict.reason}`;
    const header = this.settings.header;
    switch (verdict.result) {
      case 'missing':
        return new BrokerProblem('attestation-missing', `send this application's attestation token in the ${header} header`);
      case 'invalid':
        return new BrokerProblem(
          'attestation-invalid',
          'the attestation token is not genuine or has expired; get a fresh one and retry',
          reason,
        );
      case 'other-app':
        return new BrokerProblem('attestation-other-app', 'the attestation token was issued to another application', reason);
      case 'replayed':
        return new BrokerProblem('attestation-replayed', 'the attestation token was used before; send a new one with each request', reason);
      case 'no-keys':
        return new BrokerProblem(
          'attestation-unavailable',
          'attestation tokens cannot be checked right now; retry later',
          reason,
          this.keys.retryAfterSeconds(),
        );
    }
  }

  /** The header as configured, for the CORS preflight's Access-Control-Allow-Headers. */
  get headerName(): string {
    return this.settings.header;
  }

  /** Whether tokens can be verified at all: an instance without the issuer's keys cannot. */
  get hasKeys(): boolean {
    return this.keys.status().state !== 'none';
  }

  status(): { mode: AttestationSettings['mode']; provider: AttestationSettings['provider']; keys: KeysStatus } {
    return { mode: this.settings.mode, provider: this.settings.provider, keys: this.keys.status() };
  }

  close(): Promise<void> {
    return this.keys.close();
  }

  private lookup(id: string): GenuineToken | undefined {
    const genuine = this.remembered.get(id);
    if (genuine === undefined) return undefined;
    if (genuine.rememberUntil > this.now()) return genuine;
    this.remembered.delete(id);
    return undefined;
  }

  private remember(id: string, genuine: GenuineToken): void {
    if (this.remembered.size >= MAX_REMEMBERED) {
      const oldest = this.remembered.keys().next();
      if (oldest.done !== true) this.remembered.delete(oldest.value);
    }
    this.remembered.set(id, genuine);
  }
}

/** The token in a header value: trimmed, without a `Bearer ` scheme; undefined when there is none. */
function tokenOf(headerValue: string | undefined): string | undefined {
  if (headerValue === undefined) return undefined;
  const trimmed = headerValue.trim();
  const token = /^bearer\s+/i.test(trimmed) ? trimmed.replace(/^bearer\s+/i, '') : trimmed;
  return token === '' ? undefined : token;
}
