import { describe, expect, it } from 'vitest';
import { HitSummary } from '../../../src/broker/log/hit-summary.js';

describe('HitSummary', () => {
  it('sums a window of hits per application, then starts over; a window without hits gives nothing', () => {
    let now = 1_000;
    const summary = new HitSummary(() => now);
    summary.record('com.acme.shop', 0.4);
    summary.record('com.acme.shop', 1.2);
    summary.record('shop.acme.example', 0.2);
    now += 60_000;
    expect(summary.take()).toEqual({
      cacheHits: 3,
      windowSeconds: 60,
      applications: { 'com.acme.shop': 2, 'shop.acme.example': 1 },
      meanResponseTimeMs: 0.6,
      maxResponseTimeMs: 1.2,
    });
    now += 60_000;
    expect(summary.take()).toBeUndefined();
    summary.record('com.acme.shop', 3);
    now += 1_500;
    expect(summary.take()).toEqual({
      cacheHits: 1,
      windowSeconds: 1.5,
      applications: { 'com.acme.shop': 1 },
      meanResponseTimeMs: 3,
      maxResponseTimeMs: 3,
    });
  });
});
