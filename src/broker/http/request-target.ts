/**
 * The one reading of a request target, made before the fast path, fastify's router, the limits and the logs look at
 * it, so that they all see the same resource. It reads a target the way fastify's router (find-my-way) does: an
 * absolute-form target (`http://host/path?query`) by its path and query, the path percent-decoded except for the
 * reserved characters, which stay encoded. What the router would read one way and a plain string comparison another
 * is refused instead: a fragment (no client sends one; the router would take it for the query) and percent-encoding
 * that does not decode, in the path or in the query (the query parser would leave it as it is, so a broken
 * `application_package` would read as an unknown application).
 */

/** Why a target is refused with 400 before any work; a few words for the log line. */
export interface RefusedTarget {
  readonly refused: 'fragment' | 'absolute form' | 'percent-encoding in the path' | 'percent-encoding in the query';
}

const ABSOLUTE_FORM = /^https?:\/\//i;

/** The target in origin form (`/path?query`), the path decoded as the router decodes it, or why it is refused. */
export function readRequestTarget(raw: string): string | RefusedTarget {
  // The common case, read in two scans: an origin-form target with nothing to decode and no fragment is read as sent.
  if (raw.charCodeAt(0) === 47 /* '/' */ && !raw.includes('%') && !raw.includes('#')) return raw;
  let target = raw;
  if (target.charCodeAt(0) !== 47 /* '/' */) {
    // The asterisk form (`OPTIONS *`) and other oddities go to the router as they are: they name no route.
    if (!ABSOLUTE_FORM.test(target)) return target;
    const originForm = originFormOf(target);
    if (originForm === undefined) return { refused: 'absolute form' };
    target = originForm;
  }
  if (target.includes('#')) return { refused: 'fragment' };
  const queryAt = target.indexOf('?');
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  const query = queryAt === -1 ? '' : target.slice(queryAt);
  if (query.includes('%') && !queryDecodes(query)) return { refused: 'percent-encoding in the query' };
  if (!path.includes('%')) return target;
  const decoded = decodePath(path);
  return decoded === undefined ? { refused: 'percent-encoding in the path' } : decoded + query;
}

/** `http://host/path?query` as `/path?query`; undefined without a host, or with a fragment (the router refuses both). */
function originFormOf(absolute: string): string | undefined {
  if (absolute.includes('#') || !URL.canParse(absolute)) return undefined;
  const authorityStart = absolute.indexOf('//') + 2;
  const pathAt = absolute.indexOf('/', authorityStart);
  const queryAt = absolute.indexOf('?', authorityStart);
  const authorityEnd = Math.min(pathAt === -1 ? absolute.length : pathAt, queryAt === -1 ? absolute.length : queryAt);
  if (authorityEnd === authorityStart) return undefined;
  if (authorityEnd === absolute.length) return '/';
  return absolute.charCodeAt(authorityEnd) === 63 /* '?' */ ? `/${absolute.slice(authorityEnd)}` : absolute.slice(authorityEnd);
}

/**
 * The path as the router matches it: decodeURI leaves the reserved characters (`/ ? # ; ...`) encoded, and `%25`
 * stays `%25` (encoded once more first, as the router does), so reading the result again gives the same path.
 */
function decodePath(path: string): string | undefined {
  try {
    return decodeURI(path.replaceAll('%25', '%2525'));
  } catch {
    return undefined;
  }
}

/** Whether every name and value of the query (after its `?`) percent-decodes. */
function queryDecodes(query: string): boolean {
  for (const part of query.slice(1).split('&')) {
    if (!part.includes('%')) continue;
    try {
      decodeURIComponent(part.replaceAll('+', ' '));
    } catch {
      return false;
    }
  }
  return true;
}
