import { envelopeSchema, type Envelope } from '../metrics/schema.js';
import { MalformedBodyError, type HttpClient, type HttpResponse } from './http-client.js';
import { rebaseOntoOrigin } from './urls.js';

/** Paging went wrong in a way a fresh fetch of the unit may fix (loop, too many pages): SPEC 2.3. */
export class PagingAnomaly extends Error {}

export interface Page {
  readonly number: number;
  readonly url: URL;
  readonly envelope: Envelope;
}

export interface PagerOptions {
  readonly client: HttpClient;
  readonly baseUrl: URL;
  readonly headers: Readonly<Record<string, string>>;
  /** Called when a `next` link pointed at another origin and was rebased. */
  readonly onRebase?: (from: string, to: URL) => void;
}

/** Reads a 2xx body as an envelope; anything else is a malformed body (retried, then exit 5). */
export function parseEnvelope(response: HttpResponse): Envelope {
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    throw new MalformedBodyError(`not valid JSON (${response.text.length} bytes)`);
  }
  const envelope = envelopeSchema.safeParse(body);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    throw new MalformedBodyError(`not a paginated envelope: ${issue?.path.join('.') || 'body'} ${issue?.message ?? ''}`.trim());
  }
  return envelope.data;
}

/**
 * Follows `next` from the first page until it is null. Bounded: a link already followed, or more pages than
 * max(1, ceil(count / n)) with n the first page's size, is an anomaly rather than a loop.
 */
export async function* followPages(firstUrl: URL, options: PagerOptions): AsyncGenerator<Page> {
  const followed = new Set<string>();
  let url: URL | undefined = firstUrl;
  let maxPages = 1;
  for (let number = 1; url; number++) {
    if (followed.has(url.href)) throw new PagingAnomaly(`page ${number} repeats a link already followed`);
    if (number > maxPages) throw new PagingAnomaly(`more pages than ${maxPages} for the first page's count`);
    followed.add(url.href);
    const envelope = await options.client.send({ method: 'GET', url, headers: options.headers }, parseEnvelope);
    if (number === 1) {
      const firstPageSize = envelope.results.length;
      maxPages = firstPageSize === 0 ? 1 : Math.max(1, Math.ceil(envelope.count / firstPageSize));
    }
    yield { number, url, envelope };
    if (envelope.next === null) return;
    const next = rebaseOntoOrigin(envelope.next, options.baseUrl);
    if (next.rebased) options.onRebase?.(envelope.next, next.url);
    url = next.url;
  }
}
