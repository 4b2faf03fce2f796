import { parseHttpUrl } from '../http-url.js';

/**
 * `{base}/api/bi/area-metrics/<resource>/`. A base whose path already ends in `/api` is not doubled, and
 * trailing slashes on the base do not matter.
 */
export function resourceUrl(baseUrl: URL, resource: string): URL {
  const basePath = baseUrl.pathname.replace(/\/+$/, '');
  const apiRoot = basePath.endsWith('/api') ? basePath : `${basePath}/api`;
  const url = new URL(baseUrl.origin);
  url.pathname = `${apiRoot}/bi/area-metrics/${resource}/`;
  return url;
}

export interface PageQuery {
  readonly gte: string;
  readonly lte: string;
  readonly storeCode?: string;
  readonly pageSize: number;
}

export function firstPageUrl(baseUrl: URL, resource: string, query: PageQuery): URL {
  const url = resourceUrl(baseUrl, resource);
  // URLSearchParams encodes `:` and `+`, so the filters arrive as the UTC instants they are.
  url.searchParams.set('datetime_gte', query.gte);
  url.searchParams.set('datetime_lte', query.lte);
  if (query.storeCode !== undefined) url.searchParams.set('store_code', query.storeCode);
  url.searchParams.set('page_size', String(query.pageSize));
  return url;
}

/** Validates `--base-url`: http(s), no credentials in it, and a bare root (the tool adds the path and the query). */
export function parseBaseUrl(value: string): URL {
  return parseHttpUrl(value, '--base-url', {
    example: 'https://api.example.com',
    credentialsBelong: 'use --client-id and --client-secret',
    root: true,
  });
}

/**
 * A `next` link is followed on the base URL's origin only: a link to another origin (typically `http://` behind a
 * TLS-terminating proxy) is rebased, so credentials never leave for a host the user did not name.
 */
export function rebaseOntoOrigin(link: string, baseUrl: URL): { url: URL; rebased: boolean } {
  const url = new URL(link, baseUrl);
  if (url.origin === baseUrl.origin) return { url, rebased: false };
  const rebased = new URL(`${url.pathname}${url.search}`, baseUrl.origin);
  return { url: rebased, rebased: true };
}
