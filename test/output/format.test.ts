import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvLine, extensionOf, jsonOrUndefined, jsonString } from '../../src/output/format.js';

/** What csv-stringify writes with RFC 4180 quoting, LF line ends and CR quoted: the reference the encoder matches. */
const CSV_STRINGIFY = { eof: false, record_delimiter: 'unix', quoted_match: /\r/ } as const;

describe('field encoding', () => {
  it.each(['plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere', 'Café 東京', ' padded ', ''])(
    'csvField(%j) is what csv-stringify writes',
    (text) => {
      expect(csvField(text)).toBe(stringify([[text]], CSV_STRINGIFY));
    },
  );

  it('csvLine ends with LF and quotes each field on its own', () => {
    expect(csvLine(['a', 'b,c', 'd'])).toBe('a,"b,c",d\n');
    for (const fields of [['store_code', 'date'], ['"', '""', ',', '\r\n', 'x'], ['', 'a', ''], ['only']]) {
      expect(csvLine(fields)).toBe(`${stringify([fields], CSV_STRINGIFY)}\n`);
    }
  });

  it('jsonString is JSON.stringify of the text', () => {
    expect(jsonString('say "hi" \u2028')).toBe(JSON.stringify('say "hi" \u2028'));
  });

  it('jsonOrUndefined gives undefined only for a value too deep to stringify', () => {
    let deep: unknown = 0;
    for (let depth = 0; depth < 20_000; depth++) deep = [deep];
    expect(jsonOrUndefined(deep)).toBeUndefined();
    expect(jsonOrUndefined({ a: [1] })).toBe('{"a":[1]}');
  });

  it('--shape results is always NDJSON', () => {
    expect(extensionOf({ format: 'csv', shape: 'results' })).toBe('ndjson');
    expect(extensionOf({ format: 'csv', shape: 'rows' })).toBe('csv');
  });
});
