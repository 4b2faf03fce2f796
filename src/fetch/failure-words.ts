import { errnoCode } from '../errors.js';
import { cutAtSpace } from '../redact.js';

/** Where an error body says what went wrong: problem+json first, then OAuth's fields. */
const PROBLEM_DETAIL_KEYS = ['detail', 'error_description', 'error', 'message'] as const;

/** A short, single-line detail from an error body (the first of `keys` it has), if it has one. */
export function errorDetail(text: string, keys: readonly string[] = PROBLEM_DETAIL_KEYS): string | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object') {
      for (const key of keys) {
        const value = (body as Record<string, unknown>)[key];
        if (typeof value === 'string' && value) return cutAtSpace(value.replace(/\s+/g, ' '), 200);
      }
    }
  } catch {
    // Not JSON: no detail worth repeating.
  }
  return undefined;
}

/**
 * The status a proxy refused the request with, if that is why it failed. undici says so only in its message, deep in
 * the cause chain ("Proxy response (407) !== 200 when HTTP Tunneling", "Proxy Authentication Required (407)").
 */
export function proxyStatusOf(error: unknown): number | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const match = /^Proxy (?:response \((\d{3})\)|Authentication Required \((407)\))/.exec(cause.message);
    if (match) return Number(match[1] ?? match[2]);
  }
  return undefined;
}

/**
 * Why a request failed on the network, from fetch's error (the cause holds Node's). `codeOnly` keeps just the code
 * (ECONNREFUSED) when there is one: the broker's answers and metrics must not carry an address.
 */
export function networkReason(error: unknown, options: { readonly codeOnly?: boolean } = {}): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error) {
    const code = errnoCode(cause);
    if (options.codeOnly === true && code !== undefined) return code;
    // Node's messages usually carry the code already ("connect ECONNREFUSED 127.0.0.1:9").
    return code !== undefined && !cause.message.includes(code) ? `${code} ${cause.message}`.trim() : cause.message;
  }
  return String(cause);
}
