import type { Dispatcher } from 'undici';

/** One request as the HTTP client sends it (its answer is read whole, or up to a bound: `fetchBuffered`). */
export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  readonly url: URL;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /**
   * Non-2xx statuses the caller wants to read itself (e.g. OAuth's 400 `invalid_client` body); they reach `parse`
   * instead of being treated as failures.
   */
  readonly acceptStatus?: (status: number) => boolean;
  /** What the request is for (`traffic 2026-11-20 page 2`), put before it in every warning and error about it. */
  readonly label?: string;
  /** Counts this request's attempts and its 429 answers into the caller's tally (e.g. a unit's). */
  readonly tally?: RequestTally;
  /**
   * The most bytes a body may have (a page's bound, from its size): reading stops there, and the request fails at
   * once with a ContractError (exit 5) whose message gives `what`, the caller's words for the bound.
   */
  readonly maxBody?: { readonly bytes: number; readonly what: string };
}

/** Requests sent (retries included) and the 429s among their answers. */
export interface RequestTally {
  requests: number;
  throttled: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The body as received. A page body goes to its parser as bytes, undecoded (the parser decodes it strictly). */
  readonly body: Uint8Array;
  /** The body decoded as UTF-8, on first use. */
  readonly text: string;
}

/** A response whose body has been read whole. */
export class BufferedResponse implements HttpResponse {
  private decoded: string | undefined;

  constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly body: Uint8Array,
  ) {}

  get text(): string {
    this.decoded ??= new TextDecoder().decode(this.body);
    return this.decoded;
  }
}

/** A body that could not be read as what the caller expects; retried like a network failure. */
export class MalformedBodyError extends Error {}

/** A body longer than the caller's `maxBodyBytes`: the read stopped there. */
export class BodyTooLargeError extends Error {}

/** Reads at most `limit` bytes of a body, chunk by chunk as they arrive; a larger body is cancelled. */
async function readCapped(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, length);
}

/**
 * One request, no retry: redirects are not followed (a redirect is the caller's to judge), and the body is read
 * whole, or up to `maxBodyBytes` (then BodyTooLargeError). Network failures and aborts are thrown as fetch throws them.
 */
export async function fetchBuffered(
  request: HttpRequest,
  options: { readonly signal: AbortSignal; readonly dispatcher?: Dispatcher; readonly maxBodyBytes?: number; readonly onHead?: () => void },
): Promise<BufferedResponse> {
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    redirect: 'manual',
    signal: options.signal,
    // `dispatcher` is undici's extension to fetch's init; Node's fetch honours it.
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  } as RequestInit);
  options.onHead?.();
  const body =
    options.maxBodyBytes === undefined
      ? new Uint8Array(await response.arrayBuffer())
      : await readCapped(response.body, options.maxBodyBytes);
  return new BufferedResponse(response.status, response.headers, body);
}

/**
 * Only origin and path: query strings can be long, and nothing after the path is needed to identify a call. The
 * caller's label first, so a retry line in a night's log says which unit and page it was.
 */
export function describeRequest(request: Pick<HttpRequest, 'method' | 'url' | 'label'>): string {
  const call = `${request.method} ${request.url.origin}${request.url.pathname}`;
  return request.label === undefined ? call : `${request.label}: ${call}`;
}
