import type { BrokerConfig } from '../config/config.js';

/** Headers a browser may send on the token request (our request-id correlation header). */
const ALLOWED_REQUEST_HEADERS = 'X-Request-Id';
/** Response headers a page may read beyond the CORS-safelisted ones: a 503's Retry-After, and the request id. */
const EXPOSED_RESPONSE_HEADERS = 'Retry-After, X-Request-Id';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * A browser may fetch a token only for its own web application. `Origin: https://<X>` asking for web
 * application X is allowed; every other origin, and that origin asking for another application, gets nothing.
 * Returns the origin to echo in Access-Control-Allow-Origin, or undefined.
 */
export function allowedOrigin(config: BrokerConfig, origin: string | undefined, application: unknown): string | undefined {
  if (origin === undefined || typeof application !== 'string') return undefined;
  const platformName = config.applications.get(application);
  const platform = platformName === undefined ? undefined : config.platforms.get(platformName);
  if (!platform?.browser) return undefined;
  // Browsers serialise origins with a lower-case host; the configured domain may be written in any case.
  return origin.toLowerCase() === `https://${application.toLowerCase()}` ? origin : undefined;
}

/**
 * CORS response headers for an allowed origin; `preflight` adds what an OPTIONS answer needs, allowing the
 * attestation header too when attestation is on.
 */
export function corsHeaders(origin: string, preflight: boolean, attestationHeader?: string): Record<string, string> {
  const headers: Record<string, string> = { 'access-control-allow-origin': origin };
  if (preflight) {
    headers['access-control-allow-methods'] = 'GET';
    headers['access-control-allow-headers'] =
      attestationHeader === undefined ? ALLOWED_REQUEST_HEADERS : `${ALLOWED_REQUEST_HEADERS}, ${attestationHeader}`;
    headers['access-control-max-age'] = String(PREFLIGHT_MAX_AGE_SECONDS);
  } else {
    headers['access-control-expose-headers'] = EXPOSED_RESPONSE_HEADERS;
  }
  return headers;
}
