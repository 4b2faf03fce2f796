import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Admin and token bodies are small; a larger one is refused rather than buffered. */
const MAX_BODY_BYTES = 64 * 1024;

/** An answer: status, JSON text and extra headers. */
export interface Reply {
  readonly status: number;
  readonly body: string;
  readonly headers?: Record<string, string>;
}

/** Raised while handling a request to answer with a given status and JSON body. */
export class HttpAnswer extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** Compares secrets in constant time for equal lengths. */
export function safeEqual(actual: string, expected: string): boolean {
  const a = Buffer.from(actual, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `Authorization: Basic ...` → [user, password], or undefined when absent or malformed. */
export function parseBasic(header: string | undefined): [string, string] | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/**
 * OAuth 2.0 clients may form-encode the client id and secret before Basic encoding them; undo it where it was
 * done (text that is not valid form encoding is taken as it is).
 */
export function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A query parameter as a whole number >= 1, or undefined. */
export function positiveInteger(text: string): number | undefined {
  if (!/^\d{1,15}$/.test(text)) return undefined;
  const value = Number(text);
  return value >= 1 ? value : undefined;
}

/** The request body as UTF-8 text; 413 past the size limit. */
export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpAnswer(413, { detail: 'Request body too large.' }));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** The request body as JSON (an empty body is `{}`); 400 naming `what` the body should be when it does not parse. */
export async function readJsonBody(request: IncomingMessage, what: string): Promise<unknown> {
  const text = await readBody(request);
  try {
    return text.trim() === '' ? {} : (JSON.parse(text) as unknown);
  } catch {
    throw new HttpAnswer(400, { detail: `The body must be a JSON object of ${what}.` });
  }
}
