import { decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { ALLOWED_ALGORITHMS, type AllowedAlgorithm, type AttestationKeys } from './keys.js';
import type { AttestationSettings } from './settings.js';

/** Seconds of clock skew allowed on `exp` and `iat`. */
export const CLOCK_SKEW_SECONDS = 60;
/** A longer header value is not a token worth parsing (App Check tokens are about 1 KB). */
export const MAX_TOKEN_LENGTH = 8192;

/** A token that verified: who it was issued to, until when, and its id (for single use). */
export interface GenuineToken {
  readonly kind: 'genuine';
  /** The application claim (`sub` for App Check): the app id the token was issued to. */
  readonly appId: string | undefined;
  /** Epoch ms. */
  readonly expiresAt: number;
  readonly jti: string | undefined;
}

/** Why a token is not genuine, for the logs only (never the token or its claims' values). */
export interface RefusedToken {
  readonly kind: 'invalid' | 'no-keys';
  readonly reason: string;
}

function refused(reason: string): RefusedToken {
  return { kind: 'invalid', reason };
}

function isAllowed(alg: unknown): alg is AllowedAlgorithm {
  return (ALLOWED_ALGORITHMS as readonly unknown[]).includes(alg);
}

/** What jose's error says was wrong, in a word or two. */
function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTClaimValidationFailed) return `${error.claim} claim (${error.reason})`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  if (error instanceof errors.JOSEError) return error.code;
  return 'malformed';
}

/**
 * Verifies an attestation token exactly as the contract lists it: its header names RS256 or ES256 and a `kid` of
 * the issuer's keys, its signature verifies with that key, `iss` is the issuer, `aud` holds the audience, `exp` is in
 * the future and `iat` not (with 60 s of skew). Whose token it is (the application claim) is for the caller.
 */
export class AttestationVerifier {
  constructor(
    private readonly settings: AttestationSettings,
    private readonly keys: AttestationKeys,
    private readonly now: () => number,
  ) {}

  async verify(token: string): Promise<GenuineToken | RefusedToken> {
    if (token.length > MAX_TOKEN_LENGTH) return refused('too long');
    let alg: unknown;
    let kid: unknown;
    try {
      ({ alg, kid } = decodeProtectedHeader(token));
    } catch {
      return refused('malformed');
    }
    if (!isAllowed(alg)) return refused(`alg ${typeof alg === 'string' ? alg.slice(0, 20) : 'missing'}`);
    if (typeof kid !== 'string') return refused('no kid');
    const key = await this.keys.keyFor(kid, alg);
    if (key === 'none') return { kind: 'no-keys', reason: 'no issuer keys held' };
    if (key === 'unknown') return refused('kid not among the issuer keys');
    const now = this.now();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [alg],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: new Date(now),
        requiredClaims: ['exp', 'iat'],
      }));
    } catch (error) {
      return refused(reasonOf(error));
    }
    // jose checks `iat` only against a maximum age; a token issued in the future is not genuine either.
    if (typeof payload.iat !== 'number' || payload.iat * 1000 > now + CLOCK_SKEW_SECONDS * 1000) return refused('iat claim (in the future)');
    const appId = payload[this.settings.appClaim];
    return {
      kind: 'genuine',
      appId: typeof appId === 'string' ? appId : undefined,
      expiresAt: (payload.exp as number) * 1000,
      jti: typeof payload.jti === 'string' ? payload.jti : undefined,
    };
  }
}
