import { describe, expect, it } from 'vitest';
import { announcedLimit } from '../../src/fetch/rate-limit-headers.js';

const NOW = Date.parse('2026-11-20T10:00:00Z');
const read = (fields: Record<string, string>) => announcedLimit(new Headers(fields), NOW);

describe('announcedLimit', () => {
  it.each([
    [
      'the IETF draft: policy and budget',
      { 'ratelimit-policy': '"default";q=10;w=1', ratelimit: '"default";r=4;t=1' },
      { quota: 10, windowSeconds: 1, remaining: 4, resetSeconds: 1 },
    ],
    [
      'the slowest of several policies, with its own budget',
      { 'ratelimit-policy': '"burst";q=100;w=60, "daily";q=1000;w=86400', ratelimit: '"burst";r=50;t=30, "daily";r=900;t=5000' },
      { quota: 1000, windowSeconds: 86400, remaining: 900, resetSeconds: 5000 },
    ],
    ['a policy split over two fields', { 'ratelimit-policy': '"a";q=100;w=10, "b";q=5;w=1' }, { quota: 5, windowSeconds: 1 }],
    ['a budget without a policy', { ratelimit: '"default";r=0;t=7' }, { remaining: 0, resetSeconds: 7 }],
    ['an earlier draft: the policy as an integer item', { 'ratelimit-policy': '10;w=1' }, { quota: 10, windowSeconds: 1 }],
    [
      'a policy of content bytes is not one of requests',
      { 'ratelimit-policy': '"bytes";q=65535;qu="content-bytes";w=10', ratelimit: '"bytes";r=100;t=3' },
      { remaining: 100, resetSeconds: 3 },
    ],
    [
      'X- headers with the reset in seconds',
      { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '1' },
      { quota: 10, remaining: 3, resetSeconds: 1 },
    ],
    [
      'X- headers with the reset as an epoch instant',
      { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': String(NOW / 1000 + 1800) },
      { quota: 5000, remaining: 4999, resetSeconds: 1800 },
    ],
    [
      'the first drafts: RateLimit-Limit, -Remaining, -Reset',
      { 'ratelimit-limit': '100', 'ratelimit-remaining': '0', 'ratelimit-reset': '30' },
      { quota: 100, remaining: 0, resetSeconds: 30 },
    ],
  ])('reads %s', (_name, fields, expected) => {
    expect(read(fields)).toEqual(expected);
  });

  it.each([
    ['no such headers', {}],
    ['a malformed draft field (ignored, as the draft requires)', { 'ratelimit-policy': 'default;;q=10' }],
    ['a policy without a window', { 'ratelimit-policy': '"default";q=10' }],
    ['a policy with a zero window', { 'ratelimit-policy': '"default";q=10;w=0' }],
    ['a negative budget', { ratelimit: '"default";r=-1;t=1' }],
    ['X- headers that are not numbers', { 'x-ratelimit-limit': 'many', 'x-ratelimit-remaining': 'some' }],
  ])('finds nothing in %s', (_name, fields) => {
    expect(read(fields)).toBeUndefined();
  });
});
