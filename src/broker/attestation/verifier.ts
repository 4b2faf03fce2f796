import { decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { ALLOWED_ALGORITHMS, type AllowedAlgorithm, type AttestationKeys } from './keys.js';
import type { AttestationSettings } from '../config/attestation-settings.js';

/** Seconds of clock skew allowed on `exp` and `iat`. */
export const CLOCK_SKEW_SECONDS = 60;
/** A longer header value is not a token worth parsing (App Check tokens are about 1 KB). */
export const MAX_TOKEN_LENGTH = 8192;
/** The longest lifetime (`exp - iat`) of a genuine token: App Check tokens live 30 minutes to 7 days. */
export const MAX_TOKEN_LIFETIME_SECONDS = 7 * 24 * 60 * 60;

/**
 * Why an attestation was refused, as a word from a fixed set: the log gives each its own line once per interval
 * (an operator rolling App Check out needs the reason), and a client cannot make up new ones.
 */
export type RefusalCause =
  | 'missing'
  | 'expired'
  | 'not yet valid'
  | 'lifetime'
  | 'audience'
  | 'issuer'
  | 'signature'
  | 'algorithm'
  | 'unknown key'
  | 'no keys'
  | 'malformed'
  | 'no subject'
  | 'other app'
  | 'replayed'
  | 'no jti';

/** A token that verified: who it was issued to, until when, and its id (for single use). */
export interface GenuineToken {
  readonly kind: 'genuine';
  /** The application claim (`sub` for App Check): the app id the token was issued to. */
  readonly appId: string;
  /** Epoch ms: its `exp`. */
  readonly expiresAt: number;
  /** Epoch ms until which it is remembered as genuine: its `exp`, but never longer than its own lifetime from now. */
  readonly rememberUntil: number;
  readonly jti: string | undefined;
}

/** Why a token is not genuine, for the logs only (never the token or its claims' values). */
export interface RefusedToken {
  readonly kind: 'invalid' | 'no-keys';
  readonly cause: RefusalCause;
  readonly reason: string;
}

function refused(cause: RefusalCause, reason: string = cause): RefusedToken {
  return { kind: 'invalid', cause, reason };
}

function isAllowed(alg: unknown): alg is AllowedAlgorithm {
  return (ALLOWED_ALGORITHMS as readonly unknown[]).includes(alg);
}

const CLAIM_CAUSES: Readonly<Record<string, RefusalCause>> = {
  aud: 'audience',
  iss: 'issuer',
  exp: 'expired',
  nbf: 'not yet valid',
  iat: 'malformed',
};

/** What jose's error says was wrong: its cause, and a word or two more. */
function refusalOf(error: unknown): RefusedToken {
  if (error instanceof errors.JWTExpired) return refused('expired', `exp claim (${error.reason})`);
  if (error instanceof errors.JWTClaimValidationFailed) {
    const cause = error.reason === 'missing' ? 'malformed' : (CLAIM_CAUSES[error.claim] ?? 'malformed');
    return refused(cause, `${error.claim} claim (${error.reason})`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return refused('signature');
  if (error instanceof errors.JOSEError) return refused('malformed', error.code);
  return refused('malformed');
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
    if (token.length > MAX_TOKEN_LENGTH) return refused('malformed', 'too long');
    let alg: unknown;
    let kid: unknown;
    try {
      ({ alg, kid } = decodeProtectedHeader(token));
    } catch {
      return refused('malformed');
    }
    if (!isAllowed(alg)) return refused('algorithm', `alg ${typeof alg === 'string' ? alg.slice(0, 20) : 'missing'}`);
    if (typeof kid !== 'string') return refused('unknown key', 'no kid');
    const key = await this.keys.keyFor(kid, alg);
    if (key === 'none') return { kind: 'no-keys', cause: 'no keys', reason: 'no issuer keys held' };
    if (key === 'unknown') return refused('unknown key', 'kid not among the issuer keys');
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
      return refusalOf(error);
    }
    const { iat, exp } = payload as { iat: number; exp: number };
    // jose checks `iat` only against a maximum age; a token issued in the future is not genuine either.
    if (iat * 1000 > now + CLOCK_SKEW_SECONDS * 1000) return refused('not yet valid', 'iat claim (in the future)');
    // A longer-lived token is not one the issuer makes: remembered, it would be served from memory for as long.
    if (exp - iat > MAX_TOKEN_LIFETIME_SECONDS) return refused('lifetime', 'exp - iat over 7 days');
    const appId = payload[this.settings.appClaim];
    if (typeof appId !== 'string' || appId === '') return refused('no subject', `no ${this.settings.appClaim} claim`);
    const expiresAt = exp * 1000;
    return {
      kind: 'genuine',
      appId,
      expiresAt,
      rememberUntil: Math.min(expiresAt, now + (exp - iat) * 1000),
      jti: typeof payload.jti === 'string' ? payload.jti : undefined,
    };
  }
}
