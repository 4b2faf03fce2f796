import { parseList } from 'structured-headers';

/**
 * What a vendor announces about its rate limit on an answer: its policy (a quota of requests per window) and the
 * budget left (requests still allowed, and when the window resets). Any part may be missing.
 */
export interface AnnouncedLimit {
  /** Requests allowed per window. */
  readonly quota?: number;
  /** The policy's window, in seconds. */
  readonly windowSeconds?: number;
  /** Requests still allowed in the current window. */
  readonly remaining?: number;
  /** Seconds until the current window resets (the quota is back). */
  readonly resetSeconds?: number;
}

/** A list member as read here: its value and its parameters. */
type Member = readonly [unknown, ReadonlyMap<string, unknown>];

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** A structured-field list, or nothing: a malformed field is ignored, as the draft requires. */
function listOf(text: string | null): Member[] {
  if (text === null || text.trim() === '') return [];
  try {
    // The library's item types name DOM types (BufferSource) outside this project's libs: read the members as unknown.
    const members = parseList(text) as unknown as readonly Member[];
    // An inner list (an array as the value) is no policy.
    return members.filter((member) => !Array.isArray(member[0]));
  } catch {
    return [];
  }
}

/**
 * `RateLimit-Policy` and `RateLimit` of the IETF httpapi draft: `"default";q=10;w=1` and `"default";r=4;t=1`. Of
 * several request policies the slowest one (fewest requests a second) binds; its `RateLimit` item gives the budget.
 * An older spelling of the policy, `10;w=1` (an integer item), is read too.
 */
function draftLimit(headers: Headers): AnnouncedLimit | undefined {
  const policies = listOf(headers.get('ratelimit-policy')).flatMap(([name, params]) => {
    const unit = params.get('qu');
    const quota = count(params.get('q')) ?? count(name);
    const windowSeconds = count(params.get('w'));
    if ((unit !== undefined && unit !== 'requests') || quota === undefined || windowSeconds === undefined || windowSeconds === 0) return [];
    return [{ name, quota, windowSeconds }];
  });
  const policy = policies.sort((a, b) => a.quota / a.windowSeconds - b.quota / b.windowSeconds)[0];
  const budgets = listOf(headers.get('ratelimit')).flatMap(([name, params]) => {
    const remaining = count(params.get('r'));
    const resetSeconds = count(params.get('t'));
    return remaining === undefined ? [] : [{ name, remaining, resetSeconds }];
  });
  const budget =
    budgets.find((item) => policy !== undefined && item.name === policy.name) ?? budgets.sort((a, b) => a.remaining - b.remaining)[0];
  if (policy === undefined && budget === undefined) return undefined;
  return {
    ...(policy ? { quota: policy.quota, windowSeconds: policy.windowSeconds } : {}),
    ...(budget ? { remaining: budget.remaining } : {}),
    ...(budget?.resetSeconds !== undefined ? { resetSeconds: budget.resetSeconds } : {}),
  };
}

/** A reset later than this many seconds from the epoch is an instant (GitHub's style), not a number of seconds. */
const EPOCH_SECONDS_FROM = 1_000_000_000;

/**
 * `X-RateLimit-Limit`, `-Remaining` and `-Reset` (and the first drafts' unprefixed `RateLimit-Limit`, ...): the
 * quota of a window whose length is not said, what is left of it, and its reset as seconds or as an epoch instant.
 */
function prefixedLimit(headers: Headers, prefix: string, nowMs: number): AnnouncedLimit | undefined {
  const number = (name: string): number | undefined => {
    const match = /^\s*(\d+(?:\.\d+)?)/.exec(headers.get(`${prefix}${name}`) ?? '');
    return match ? Number(match[1]) : undefined;
  };
  const quota = number('limit');
  const remaining = number('remaining');
  const reset = number('reset');
  if (quota === undefined && remaining === undefined) return undefined;
  const resetSeconds = reset === undefined ? undefined : reset >= EPOCH_SECONDS_FROM ? Math.max(0, reset - nowMs / 1000) : reset;
  return {
    ...(quota !== undefined && quota >= 1 ? { quota: Math.floor(quota) } : {}),
    ...(remaining !== undefined ? { remaining: Math.floor(remaining) } : {}),
    ...(resetSeconds !== undefined ? { resetSeconds } : {}),
  };
}

/** The vendor's announcement on this answer, from the first family of headers it uses; undefined when it has none. */
export function announcedLimit(headers: Headers, nowMs: number): AnnouncedLimit | undefined {
  return draftLimit(headers) ?? prefixedLimit(headers, 'x-ratelimit-', nowMs) ?? prefixedLimit(headers, 'ratelimit-', nowMs);
}
