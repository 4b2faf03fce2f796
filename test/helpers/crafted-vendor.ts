import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

/** A request as the crafted vendor saw it: its number (1-based), metric, day and when it came. */
export interface CraftedRequest {
  readonly n: number;
  readonly metric: string;
  readonly day: string;
  readonly url: URL;
  readonly at: number;
}

export interface CraftedVendor {
  readonly url: string;
  readonly requests: CraftedRequest[];
  close(): Promise<void>;
}

const VALUES: Readonly<Record<string, unknown>> = { 'unique-users': 3, 'avg-screen-time': '00:01:30', traffic: '1.00000' };
const VALUE_KEYS: Readonly<Record<string, string>> = {
  'unique-users': 'unique_users',
  'avg-screen-time': 'avg_screen_time',
  traffic: 'traffic_pct',
};

/** One valid result of the request's metric and day: store `storeCode`, one zone. */
export function resultFor(request: Pick<CraftedRequest, 'metric' | 'day'>, storeCode = 'S1'): Record<string, unknown> {
  return {
    store_code: storeCode,
    date: `${request.day}T12:00:00Z`,
    granularity: 'daily',
    values: [{ zone: 'A', [VALUE_KEYS[request.metric]!]: VALUES[request.metric] }],
  };
}

/** The API's envelope around `results`: `count` and `next` as given (default: the results, no next page). */
export function envelope(results: readonly unknown[], options: { count?: number; next?: string | null } = {}): string {
  return JSON.stringify({ count: options.count ?? results.length, next: options.next ?? null, previous: null, results });
}

/**
 * A vendor of our own making on loopback: the real path and envelope, with whatever headers and bodies a test
 * crafts. `answer` gets each request (its metric and day read from the URL) and answers it, or never does.
 */
export async function startCraftedVendor(
  answer: (request: CraftedRequest, response: ServerResponse, raw: IncomingMessage) => void,
): Promise<CraftedVendor> {
  const requests: CraftedRequest[] = [];
  const server = createServer((raw, response) => {
    const url = new URL(raw.url ?? '/', 'http://vendor');
    const metric = /\/api\/bi\/area-metrics\/([^/]+)\//.exec(url.pathname)?.[1] ?? '';
    const day = (url.searchParams.get('datetime_gte') ?? '').slice(0, 10);
    const request = { n: requests.length + 1, metric, day, url, at: performance.now() };
    requests.push(request);
    answer(request, response, raw);
  });
  const { url, close } = await listenOnLoopback(server);
  return { url, requests, close };
}

/** A 200 with the envelope, and these headers. */
export function answerPage(response: ServerResponse, body: string, headers: Readonly<Record<string, string>> = {}): void {
  response.writeHead(200, { 'content-type': 'application/json', ...headers });
  response.end(body);
}
