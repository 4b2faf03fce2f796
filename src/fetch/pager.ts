import { IncompleteError } from '../errors.js';
import type { HttpClient } from './http-client.js';
import type { HttpRequest, HttpResponse, RequestTally } from './exchange.js';
import { rebaseOntoOrigin } from './urls.js';

/** Paging went wrong in a way a fresh fetch of the unit may fix (loop, too many pages, a page gone). */
export class PagingAnomaly extends Error {}

/** What paging needs from a parsed page of the envelope (`count`, `next`, `previous`, `results`). */
export interface PageLinks {
  readonly count: number;
  readonly next: string | null;
  /** Results on this page. */
  readonly size: number;
}

export interface Page<P extends PageLinks> {
  readonly number: number;
  readonly url: URL;
  readonly content: P;
}

export interface PagerOptions<P extends PageLinks> {
  readonly client: HttpClient;
  readonly baseUrl: URL;
  readonly headers: Readonly<Record<string, string>>;
  /** Turns a 2xx body into the page; throws MalformedBodyError for a body that is not the API's (retried). */
  readonly parse: (response: HttpResponse) => P | Promise<P>;
  /** Names a page's request in warnings and errors (`traffic 2026-11-20 page 2`). */
  readonly label?: (page: number) => string;
  /** Called when a `next` link pointed at another origin and was rebased. */
  readonly onRebase?: (from: string, to: URL) => void;
  /** Counts every page's requests and 429s. */
  readonly tally?: RequestTally;
  /** The caller's bound on pages, whatever `count` and `next` say: beyond it the paging fails (exit 6), not refetched. */
  readonly maxPages?: { readonly pages: number; readonly why: string };
  /** The caller's bound on a page's body. */
  readonly maxBody?: HttpRequest['maxBody'];
}

/**
 * Follows `next` from the first page until it is null. Bounded: a link already followed, or more pages than
 * max(1, ceil(count / n)) with n the first page's size, is an anomaly rather than a loop.
 */
export async function* followPages<P extends PageLinks>(firstUrl: URL, options: PagerOptions<P>): AsyncGenerator<Page<P>> {
  const followed = new Set<string>();
  let url: URL | undefined = firstUrl;
  let maxPages = 1;
  for (let number = 1; url; number++) {
    if (followed.has(url.href)) throw new PagingAnomaly(`page ${number} repeats a link already followed`);
    if (number > maxPages) throw new PagingAnomaly(`more pages than ${maxPages} for the first page's count`);
    if (options.maxPages !== undefined && number > options.maxPages.pages) {
      throw new IncompleteError(
        `${options.label?.(number) ?? `page ${number}`}: paging did not end within ${options.maxPages.pages} pages, ${options.maxPages.why}`,
      );
    }
    followed.add(url.href);
    const content = await options.client.send(
      // A 404 after the first page is the result set shrinking while we page (DRF: "Invalid page."): a fresh fetch
      // of the unit sees the new set, where the first page's 404 means a wrong URL.
      {
        method: 'GET',
        url,
        headers: options.headers,
        ...(options.label ? { label: options.label(number) } : {}),
        ...(number > 1 ? { acceptStatus: (status) => status === 404 } : {}),
        ...(options.tally ? { tally: options.tally } : {}),
        ...(options.maxBody ? { maxBody: options.maxBody } : {}),
      },
      (response) => {
        if (response.status === 404) throw new PagingAnomaly(`page ${number} is gone (HTTP 404): the results changed while paging`);
        return options.parse(response);
      },
    );
    if (number === 1) {
      maxPages = content.size === 0 ? 1 : Math.max(1, Math.ceil(content.count / content.size));
      // The count is the vendor's: no more pages than the caller's bound enter the run's size.
      options.client.pacer.unitPages(Math.min(maxPages, options.maxPages?.pages ?? maxPages));
    }
    yield { number, url, content };
    if (content.next === null) return;
    const next = rebaseOntoOrigin(content.next, options.baseUrl);
    if (next.rebased) options.onRebase?.(content.next, next.url);
    url = next.url;
  }
}
