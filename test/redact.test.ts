import { describe, expect, it } from 'vitest';
import { createRedactor, secretSpellings } from '../src/redact.js';

describe('createRedactor', () => {
  const secret = 'Top"Se\\cret/42 +x';
  const redact = createRedactor([{ clientId: 'acme', secret }]);

  it('replaces the raw, JSON-escaped, URL-encoded and form-encoded secret', () => {
    for (const spelling of [
      secret,
      JSON.stringify(secret).slice(1, -1),
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
    ]) {
      expect(redact(`before ${spelling} after`)).toBe('before *** after');
    }
  });

  it('replaces the Base64 of client_id:secret and of client_id:urlencoded(secret)', () => {
    const basic = Buffer.from(`acme:${secret}`).toString('base64');
    const basicEncoded = Buffer.from(`acme:${encodeURIComponent(secret)}`).toString('base64');
    expect(redact(`{"detail":"bad header Basic ${basic}"}`)).toBe('{"detail":"bad header Basic ***"}');
    expect(redact(`Basic ${basicEncoded}`)).toBe('Basic ***');
  });

  it('catches the secret inside a JSON log line', () => {
    const line = JSON.stringify({ msg: `echo ${secret}` });
    expect(redact(line)).not.toContain('Se\\\\cret');
    expect(redact(line)).toContain('***');
  });

  it('leaves text alone when there is no credential or the secret is too short to be told from words', () => {
    expect(createRedactor([])('plain text')).toBe('plain text');
    expect(secretSpellings({ secret: 'abc' })).toEqual([]);
    expect(createRedactor([{ secret: 'abc' }])('abc')).toBe('abc');
  });
});
