import { DateTime } from 'luxon';
import { decodeJwt, numericDateClaim, type DecodedJwt } from './jwt.js';
import { tokenLifetime, type TokenLifetime, type TokenResponse } from './client-credentials.js';

/** A token about to expire is useless for an SDK that initialises later; the vendor suggests 30..60 s margins. */
export const SHORT_LIFETIME_SECONDS = 60;
/** `exp` and `expires_in` further apart than this means a clock or configuration problem worth a look. */
export const DISAGREEMENT_SECONDS = 60;

export type TokenOrigin = 'auth-server' | 'broker';

export interface TokenReport {
  token: TokenResponse;
  decoded: DecodedJwt | undefined;
  lifetime: TokenLifetime;
  warnings: string[];
}

export interface DescribeOptions {
  origin: TokenOrigin;
  requestSentAt: Date;
  now: Date;
}

function iso(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Everything the token command shows, and the warnings (never failures) it can raise. */
export function describeToken(token: TokenResponse, options: DescribeOptions): TokenReport {
  const decoded = decodeJwt(token.access_token);
  const lifetime = tokenLifetime(token, options.requestSentAt);
  const warnings: string[] = [];

  if (!decoded) warnings.push('the token is not a JWT: shown as opaque (no header or claims to decode)');

  if (lifetime.expiresAt) {
    const left = Math.floor((lifetime.expiresAt.getTime() - options.now.getTime()) / 1000);
    if (left <= 0) {
      warnings.push(`the token has already expired (at ${iso(lifetime.expiresAt)}); check the clocks and the auth server`);
    } else if (left <= SHORT_LIFETIME_SECONDS) {
      warnings.push(`the token expires within ${SHORT_LIFETIME_SECONDS} s (in ${left} s, at ${iso(lifetime.expiresAt)})`);
    }
  } else {
    warnings.push('the token carries neither expires_in nor an exp claim: its expiry is unknown');
  }

  const exp = decoded ? numericDateClaim(decoded.claims, 'exp') : undefined;
  if (exp && token.expires_in !== undefined) {
    const fromExpiresIn = options.requestSentAt.getTime() + token.expires_in * 1000;
    const apart = Math.round(Math.abs(exp.getTime() - fromExpiresIn) / 1000);
    if (apart > DISAGREEMENT_SECONDS) {
      warnings.push(
        `the exp claim (${iso(exp)}) and expires_in (${token.expires_in} s, ${iso(new Date(fromExpiresIn))}) ` +
          `disagree by ${apart} s; the earlier one counts`,
      );
    }
  }

  if (token.token_type !== undefined && token.token_type.toLowerCase() !== 'bearer') {
    warnings.push(`token_type is ${JSON.stringify(token.token_type)}, not Bearer`);
  } else if (token.token_type === undefined && options.origin === 'auth-server') {
    // RFC 6749 5.1 makes token_type required; a broker's answer has none by design (its answer is only `access_token` and `expires_in`).
    warnings.push('the auth server sent no token_type (RFC 6749 requires one; Bearer is expected)');
  }

  return { token, decoded, lifetime, warnings };
}

/** `--json`: the server's JSON plus the decoded `claims` and `header` (null for an opaque token). */
export function formatJson(report: TokenReport): string {
  return `${JSON.stringify(
    { ...report.token, claims: report.decoded?.claims ?? null, header: report.decoded?.header ?? null },
    null,
    2,
  )}\n`;
}

/** `--raw`: the token alone, for `export T=$(area-metrics token --raw)`. */
export function formatRaw(report: TokenReport): string {
  return `${report.token.access_token}\n`;
}

export interface HumanFormatOptions {
  /** IANA zone for the "local" times; the process's zone by default. */
  zone?: string;
}

const TIME_CLAIMS = new Set(['iat', 'exp', 'nbf', 'auth_time']);
const CLAIM_ORDER = ['iss', 'sub', 'aud', 'scope', 'client_id', 'iat', 'nbf', 'exp'];

function instant(date: Date, zone: string | undefined): string {
  const local = DateTime.fromJSDate(date, zone ? { zone } : {});
  return `${iso(date)} (local ${local.toFormat('yyyy-LL-dd HH:mm:ss ZZ')})`;
}

/** JSON for values, so control characters in an untrusted token cannot reach the terminal raw. */
function show(value: unknown): string {
  return typeof value === 'string' && /^[\x20-\x7e\u00a0-\uffff]*$/.test(value) && value !== '' ? value : JSON.stringify(value);
}

function fields(record: Record<string, unknown>, order: readonly string[], zone: string | undefined): string[] {
  const keys = [...order.filter((key) => key in record), ...Object.keys(record).filter((key) => !order.includes(key))];
  const width = Math.max(0, ...keys.map((key) => key.length));
  return keys.map((key) => {
    const value = record[key];
    const date = TIME_CLAIMS.has(key) ? numericDateClaim(record, key) : undefined;
    const text = date ? `${String(value)} = ${instant(date, zone)}` : show(value);
    return `  ${key.padEnd(width)}  ${text}`;
  });
}

/** The default, human output: what an integrator needs to see to know whether the token is any good. */
export function formatHuman(report: TokenReport, options: HumanFormatOptions = {}): string {
  const { token, decoded, lifetime } = report;
  const lines: string[] = [];
  lines.push(`token type:  ${token.token_type !== undefined ? show(token.token_type) : '(none sent)'}`);
  lines.push(`expires_in:  ${token.expires_in !== undefined ? `${token.expires_in} s` : '(none sent)'}`);
  lines.push(
    `expires at:  ${
      lifetime.expiresAt
        ? `${instant(lifetime.expiresAt, options.zone)}, from ${lifetime.source === 'exp' ? 'the exp claim' : 'expires_in'}`
        : 'unknown'
    }`,
  );
  if (token.scope !== undefined) lines.push(`scope:       ${show(token.scope)}`);
  lines.push('');
  if (decoded) {
    lines.push('JWT decoded; the signature was NOT verified (this tool holds no key), so trust nothing below.');
    lines.push('header:');
    lines.push(...fields(decoded.header, ['alg', 'typ', 'kid'], options.zone));
    lines.push('claims:');
    lines.push(...fields(decoded.claims, CLAIM_ORDER, options.zone));
  } else {
    lines.push('opaque token: not a JWT, so there is no header or claims to decode.');
  }
  lines.push('');
  lines.push('access token:');
  lines.push(token.access_token);
  return `${lines.join('\n')}\n`;
}
