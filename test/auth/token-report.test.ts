import { describe, expect, it } from 'vitest';
import { describeToken, formatHuman, formatJson, formatRaw } from '../../src/auth/token-report.js';
import { makeJwt } from './make-jwt.js';

const sentAt = new Date('2026-03-01T12:00:00Z');
const now = new Date('2026-03-01T12:00:01Z');
const seconds = (date: Date, offset: number): number => date.getTime() / 1000 + offset;

describe('describeToken', () => {
  it('has no warnings for a healthy Bearer JWT', () => {
    const token = { access_token: makeJwt({ exp: seconds(sentAt, 3600) }), expires_in: 3600, token_type: 'Bearer' };
    expect(describeToken(token, { origin: 'auth-server', requestSentAt: sentAt, now }).warnings).toEqual([]);
  });

  it('warns about an expired token, a missing expiry, and a missing token_type from an auth server only', () => {
    const expired = describeToken(
      { access_token: makeJwt({ exp: seconds(sentAt, -5) }), token_type: 'Bearer' },
      {
        origin: 'auth-server',
        requestSentAt: sentAt,
        now,
      },
    );
    expect(expired.warnings.join('\n')).toContain('already expired');
    const unknown = describeToken({ access_token: makeJwt({ sub: 'x' }) }, { origin: 'auth-server', requestSentAt: sentAt, now });
    expect(unknown.warnings.join('\n')).toContain('neither expires_in nor an exp claim');
    expect(unknown.warnings.join('\n')).toContain('no token_type');
    const fromBroker = describeToken(
      { access_token: makeJwt({ exp: seconds(sentAt, 600) }), expires_in: 600 },
      {
        origin: 'broker',
        requestSentAt: sentAt,
        now,
      },
    );
    expect(fromBroker.warnings).toEqual([]);
  });

  it('warns at 60 s left but not at 61 s', () => {
    const at = (left: number): string[] =>
      describeToken(
        { access_token: 'opaque', expires_in: left + 1, token_type: 'Bearer' },
        { origin: 'broker', requestSentAt: sentAt, now },
      ).warnings.filter((warning) => warning.includes('expires within'));
    expect(at(60)).toHaveLength(1);
    expect(at(61)).toHaveLength(0);
  });
});

describe('formats', () => {
  const jwt = makeJwt({ iss: 'https://auth', sub: 'c', iat: seconds(sentAt, 0), exp: seconds(sentAt, 3600), custom: 'line\nbreak' });
  const report = describeToken(
    { access_token: jwt, expires_in: 3600, token_type: 'Bearer' },
    { origin: 'auth-server', requestSentAt: sentAt, now },
  );

  it('human: UTC and local instants, dates for time claims, escaped control characters, token last', () => {
    const text = formatHuman(report, { zone: 'Europe/Paris' });
    expect(text).toContain('expires at:  2026-03-01T13:00:00Z (local 2026-03-01 14:00:00 +01:00), from expires_in');
    expect(text).toMatch(/iat +1772366400 = 2026-03-01T12:00:00Z \(local 2026-03-01 13:00:00 \+01:00\)/);
    expect(text).toContain('custom  "line\\nbreak"');
    expect(text).toContain('NOT verified');
    expect(text.endsWith(`access token:\n${jwt}\n`)).toBe(true);
  });

  it('raw and json', () => {
    expect(formatRaw(report)).toBe(`${jwt}\n`);
    expect(JSON.parse(formatJson(report))).toMatchObject({ access_token: jwt, header: { alg: 'HS256' }, claims: { sub: 'c' } });
  });
});
