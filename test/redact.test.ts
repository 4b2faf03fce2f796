import { describe, expect, it } from 'vitest';
import { createRedactor, cutAtSpace, secretSpellings } from '../src/redact.js';

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

describe('cutAtSpace', () => {
  const secret = 'Sup3r-Secret-Value';

  it.each([
    ['a text within the bound, as it is', 'short text', 20, 'short text'],
    ['a text exactly at the bound, as it is', 'exactly 20 chars ok.', 20, 'exactly 20 chars ok.'],
    ['at the last space before the bound, marked', 'one two three four', 10, 'one two…'],
    ['at a space just at the bound', 'one two three', 7, 'one two…'],
    ['a first word past the bound, to nothing but the mark', 'unbroken-long-word and more', 8, '…'],
  ])('cuts %s', (_name, text, max, expected) => {
    expect(cutAtSpace(text, max)).toBe(expected);
  });

  it('leaves a secret across the bound whole or gone, never a start of it that the redaction would miss', () => {
    const redact = createRedactor([{ secret }]);
    for (let max = 1; max < 60; max++) {
      const cut = redact(cutAtSpace(`the secret ${secret} was sent`, max));
      expect(cut.length).toBeLessThanOrEqual(max + 1);
      for (let length = 4; length <= secret.length; length++) expect(cut).not.toContain(secret.slice(0, length));
    }
  });
});
