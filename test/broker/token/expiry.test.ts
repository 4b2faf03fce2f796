import { describe, expect, it } from 'vitest';
import { MAX_VALIDITY_MS, planCache, servedExpiresIn, tokenExpiry } from '../../../src/broker/token/expiry.js';

const SENT_AT = 1_700_000_000_000;

describe('tokenExpiry', () => {
  it('takes the earlier of expires_in (from when the request was sent) and exp', () => {
    expect(tokenExpiry(3600, undefined, SENT_AT)).toEqual({ kind: 'valid', expiresAt: SENT_AT + 3_600_000 });
    expect(tokenExpiry(3600, SENT_AT / 1000 + 600, SENT_AT)).toEqual({ kind: 'valid', expiresAt: SENT_AT + 600_000 });
    expect(tokenExpiry(undefined, SENT_AT / 1000 + 900, SENT_AT)).toEqual({ kind: 'valid', expiresAt: SENT_AT + 900_000 });
    expect(tokenExpiry(undefined, undefined, SENT_AT)).toEqual({ kind: 'none' });
  });

  it('caps a validity of more than a day, however large, and says from what', () => {
    for (const expiresIn of [86_401, 8_640_000_000_000, Number('9223372036854775807'), Number.MAX_VALUE]) {
      const expiry = tokenExpiry(expiresIn, undefined, SENT_AT);
      expect(expiry).toMatchObject({ kind: 'valid', expiresAt: SENT_AT + MAX_VALIDITY_MS });
      expect(expiry.kind === 'valid' && expiry.cappedFromSeconds).toBeGreaterThan(86_400);
    }
    expect(tokenExpiry(undefined, 1e300, SENT_AT)).toMatchObject({ kind: 'valid', expiresAt: SENT_AT + MAX_VALIDITY_MS });
  });

  it('rejects what is not a finite number', () => {
    expect(tokenExpiry(Number.POSITIVE_INFINITY, undefined, SENT_AT).kind).toBe('invalid');
    expect(tokenExpiry(Number.NaN, undefined, SENT_AT).kind).toBe('invalid');
    expect(tokenExpiry(-1, undefined, SENT_AT).kind).toBe('invalid');
    expect(tokenExpiry(60, Number.NaN, SENT_AT).kind).toBe('invalid');
  });
});

describe('servedExpiresIn', () => {
  it('is a positive integer of whole seconds left', () => {
    expect(servedExpiresIn(SENT_AT + 59_999, SENT_AT)).toBe(59);
    expect(servedExpiresIn(SENT_AT + 1000, SENT_AT)).toBe(1);
    expect(servedExpiresIn(SENT_AT + 999, SENT_AT)).toBe(1);
  });
});

describe('planCache', () => {
  // Each point in ms after the token was sent, with a 60 s margin.
  it.each([
    {
      name: 'a long token: fresh until twice the margin before expiry, refreshed ahead until the margin, discarded a second before',
      validMs: 3_600_000,
      points: { refreshAheadAt: 3_480_000, refreshAt: 3_540_000, discardAt: 3_599_000 },
      short: false,
    },
    {
      name: 'a token shorter than twice the margin: fresh for half its validity, refreshed ahead until three quarters',
      validMs: 30_000,
      points: { refreshAheadAt: 15_000, refreshAt: 22_500, discardAt: 29_000 },
      short: true,
    },
  ])('$name', ({ validMs, points, short }) => {
    expect(planCache(SENT_AT + validMs, SENT_AT, 60_000, 60_000)).toEqual({
      refreshAheadAt: SENT_AT + points.refreshAheadAt,
      refreshAt: SENT_AT + points.refreshAt,
      discardAt: SENT_AT + points.discardAt,
      short,
    });
  });

  it('a token just longer than twice the margin is not refreshed at once', () => {
    const plan = planCache(SENT_AT + 121_000, SENT_AT, 60_000, 60_000);
    expect(plan.refreshAt).toBe(SENT_AT + 61_000);
    expect(plan.refreshAheadAt).toBe(SENT_AT + 30_500);
  });

  it('a token without expiry is planned as valid for the assumed time and discarded at its end', () => {
    expect(planCache(undefined, SENT_AT, 60_000, 60_000)).toEqual({
      refreshAheadAt: SENT_AT + 30_000,
      refreshAt: SENT_AT + 45_000,
      discardAt: SENT_AT + 60_000,
      short: true,
    });
  });
});
