import { describe, expect, it } from 'vitest';
import { decodeJwt, numericDateClaim } from '../../src/auth/jwt.js';
import { makeJwt } from './make-jwt.js';

describe('decodeJwt', () => {
  it('decodes header and claims without verifying the signature', () => {
    const token = makeJwt({ sub: 'client-1', exp: 1_900_000_000, name: 'Zoë' });
    expect(decodeJwt(token)).toEqual({
      header: { alg: 'HS256', typ: 'JWT' },
      claims: { sub: 'client-1', exp: 1_900_000_000, name: 'Zoë' },
    });
  });

  it('accepts an empty signature (alg none)', () => {
    const token = makeJwt({ sub: 'x' }, { alg: 'none' }).replace(/\.[^.]*$/, '.');
    expect(decodeJwt(token)?.claims).toEqual({ sub: 'x' });
  });

  it.each([
    ['an opaque string', 'abc123opaque'],
    ['two segments', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0'],
    ['five segments (JWE)', 'a.b.c.d.e'],
    ['a segment that is not JSON', `${Buffer.from('not json').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.sig`],
    ['claims that are an array', `${Buffer.from('{}').toString('base64url')}.${Buffer.from('[1]').toString('base64url')}.sig`],
    ['characters outside base64url', 'ab+c.de/f.sig'],
    ['an empty string', ''],
  ])('returns undefined for %s', (_name, token) => {
    expect(decodeJwt(token)).toBeUndefined();
  });
});

describe('numericDateClaim', () => {
  it('reads seconds since the epoch and ignores other types', () => {
    expect(numericDateClaim({ exp: 1_700_000_000 }, 'exp')?.toISOString()).toBe('2023-11-14T22:13:20.000Z');
    expect(numericDateClaim({ exp: '1700000000' }, 'exp')).toBeUndefined();
    expect(numericDateClaim({}, 'exp')).toBeUndefined();
  });
});
