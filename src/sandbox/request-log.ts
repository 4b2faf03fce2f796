import type { RecordedRequest, RequestCounts } from './types.js';

/**
 * The most requests the log keeps. The tests read at most a few hundred of one sandbox; a long benchmark or a flood
 * keeps the newest, and memory stays where it is.
 */
export const REQUEST_LOG_CAPACITY = 5000;

/** A kept request's path and query are cut to these bounds, so a hostile URL costs the log no more than a plain one. */
const MAX_PATH_CHARS = 256;
const MAX_QUERY_CHARS = 512;
const MAX_QUERY_PARAMS = 16;
const MAX_METHOD_CHARS = 16;

/**
 * The first `most` characters of a text, as a string of their own: in V8 a substring may hold on to the whole string
 * it was cut from (a URL of 16 KB), which would be kept as long as the record.
 */
function cut(text: string, most: number): string {
  return Buffer.from(text.slice(0, most), 'utf8').toString('utf8');
}

/** A request as the log keeps it: its method, path and query, each cut to a bound. */
export function recordOf(method: string | undefined, url: URL): RecordedRequest {
  const params = Array.from(new URLSearchParams(url.search.slice(0, MAX_QUERY_CHARS + 1))).slice(0, MAX_QUERY_PARAMS);
  return {
    method: cut(method ?? 'GET', MAX_METHOD_CHARS),
    path: cut(url.pathname, MAX_PATH_CHARS),
    // The last value of a repeated parameter wins, as the routes read it.
    query: Object.fromEntries(params.map(([key, value]) => [cut(key, MAX_QUERY_CHARS), cut(value, MAX_QUERY_CHARS)])),
    status: 0,
    authorized: false,
  };
}

/** The newest routed requests, oldest first, in a ring of a fixed size; unrouted ones are only counted. */
export class RequestLog {
  private readonly ring: RecordedRequest[] = [];
  /** Where the next record goes once the ring is full: its oldest. */
  private oldest = 0;
  private received = 0;
  private unrouted = 0;

  constructor(readonly capacity: number = REQUEST_LOG_CAPACITY) {}

  keep(record: RecordedRequest): void {
    this.received += 1;
    if (this.ring.length < this.capacity) {
      this.ring.push(record);
      return;
    }
    this.ring[this.oldest] = record;
    this.oldest = (this.oldest + 1) % this.capacity;
  }

  countUnrouted(): void {
    this.received += 1;
    this.unrouted += 1;
  }

  /** The kept requests, oldest first (a copy; the records are the live ones, their status set when answered). */
  entries(): RecordedRequest[] {
    return [...this.ring.slice(this.oldest), ...this.ring.slice(0, this.oldest)];
  }

  counts(): RequestCounts {
    return { received: this.received, unrouted: this.unrouted, capacity: this.capacity };
  }
}
