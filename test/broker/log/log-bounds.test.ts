import { describe, expect, it } from 'vitest';
import { ErrorSummary, clientAddress, cutForLog } from '../../../src/broker/log/log-bounds.js';
import { createRedactor } from '../../../src/redact.js';

/** A redactor that knows no secret. */
const unmasked = createRedactor([]);

describe('log bounds', () => {
  it('cuts a value to 200 characters and says how long it was', () => {
    expect(cutForLog('short', unmasked)).toBe('short');
    const cut = cutForLog('x'.repeat(15_000), unmasked);
    expect(cut.startsWith('x'.repeat(200))).toBe(true);
    expect(cut).toMatch(/…\(15000 chars\)$/);
  });

  it('masks a secret before the cut, so none of it is left where the cut splits it', () => {
    const secret = 'split-me-secret-value';
    const redact = createRedactor([{ secret }]);
    for (let before = 180; before < 200; before++) {
      const cut = cutForLog(`${'a'.repeat(before)}${secret}${'b'.repeat(50)}`, redact);
      expect(cut).not.toContain(secret.slice(0, 4));
      expect(cut).toBe(`${`${'a'.repeat(before)}***${'b'.repeat(50)}`.slice(0, 200)}…(${before + 3 + 50} chars)`);
    }
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
    expect(clientAddress('10.0.0.2', ' 203.0.113.7 , 10.0.0.1', true, unmasked)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.2', '203.0.113.7', false, unmasked)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.2', undefined, true, unmasked)).toBe('10.0.0.2');
  });
});
