/** A JWS compact token's decoded header and claims. Nothing here is trusted: the signature is never checked. */
export interface DecodedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

const BASE64URL_SEGMENT = /^[A-Za-z0-9_-]+={0,2}$/;

function decodeSegment(segment: string): Record<string, unknown> | undefined {
  if (!BASE64URL_SEGMENT.test(segment)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    return value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Decodes a JWT's header and claims without verifying it (we hold no key, and only read `exp` for timing and
 * display). Returns undefined for an opaque token: anything that is not three dot-separated segments whose first
 * two are base64url JSON objects. Encrypted JWTs (JWE, five segments) are opaque to us too.
 */
export function decodeJwt(token: string): DecodedJwt | undefined {
  const segments = token.trim().split('.');
  if (segments.length !== 3) return undefined;
  const [headerSegment, claimsSegment, signature] = segments as [string, string, string];
  // An empty signature is legal for `alg: none`; anything else must at least look like base64url.
  if (signature !== '' && !BASE64URL_SEGMENT.test(signature)) return undefined;
  const header = decodeSegment(headerSegment);
  const claims = decodeSegment(claimsSegment);
  if (!header || !claims) return undefined;
  return { header, claims };
}

/** A NumericDate claim (RFC 7519 2: seconds since the epoch) as a Date, or undefined when absent or not a number. */
export function numericDateClaim(claims: Record<string, unknown>, name: string): Date | undefined {
  const value = claims[name];
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const date = new Date(value * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
