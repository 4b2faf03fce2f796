import { describe, expect, it } from 'vitest';
import { ErrorSummary, clientAddress, cutForLog } from '../../../src/broker/log/log-bounds.js';

describe('log bounds', () => {
  it('cuts a value to 200 characters and says how long it was', () => {
    expect(cutForLog('short')).toBe('short');
    const cut = cutForLog('x'.repeat(15_000));
    expect(cut.startsWith('x'.repeat(200))).toBe(true);
    expect(cut).toMatch(/…\(15000 chars\)$/);
  });

  it('lets the first error of each kind through per window and counts the rest', () => {
    let now = 0;
    const summary = new ErrorSummary(() => now);
    expect([
      summary.shouldLog('404 not-found'),
      summary.shouldLog('404 not-found'),
      summary.shouldLog('400 x'),
      summary.shouldLog('404 not-found'),
    ]).toEqual([true, false, true, false]);
    now = 60_000;
    expect(summary.take()).toEqual({ errors: { '404 not-found': 2 }, windowSeconds: 60 });
    expect(summary.shouldLog('404 not-found')).toBe(true);
    expect(summary.take()).toBeUndefined();
  });

  it('takes the first X-Forwarded-For hop only when the proxy is trusted', () => {
    expect(clientAddress('10.0.0.2', ' 203.0.113.7 , 10.0.0.1', true)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.2', '203.0.113.7', false)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', undefined, true)).toBe('10.0.0.2');
  });
});
