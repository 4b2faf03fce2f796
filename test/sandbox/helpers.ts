import type { Sandbox } from '../../src/sandbox/index.js';

/**
 * Late in the day after YESTERDAY, when every store's local day whose midnight lies in YESTERDAY's UTC window has
 * ended (the latest such midnight is 23:00Z of YESTERDAY, for a store at +01:00), so its whole window is served.
 */
export const NOW = new Date('2026-11-22T23:30:00Z');
export const YESTERDAY = '2026-11-21';

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export function metricUrl(sandbox: Sandbox, metric: string, params: Record<string, string>, slash = true): string {
  return `${sandbox.url}/api/bi/area-metrics/${metric}${slash ? '/' : ''}?${new URLSearchParams(params).toString()}`;
}

export function dayParams(day: string, extra: Record<string, string> = {}): Record<string, string> {
  return { datetime_gte: `${day}T00:00:00Z`, datetime_lte: `${day}T23:59:59Z`, ...extra };
}

export interface Envelope {
  count: number;
  next: string | null;
  previous: string | null;
  results: { store_code: string; date: string; granularity: string; values: Record<string, unknown>[] }[];
}

export async function getJson(sandbox: Sandbox, url: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const response = await fetch(url, { headers: { authorization: basic(sandbox.clientId, sandbox.clientSecret) } });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown), headers: response.headers };
}

/** Follows `next` from `url` and returns every page. */
export async function allPages(sandbox: Sandbox, url: string): Promise<Envelope[]> {
  const pages: Envelope[] = [];
  let next: string | null = url;
  while (next !== null && pages.length < 1000) {
    const { status, body } = await getJson(sandbox, next);
    if (status !== 200) throw new Error(`status ${status} for ${next}`);
    const page = body as Envelope;
    pages.push(page);
    next = page.next;
  }
  return pages;
}
