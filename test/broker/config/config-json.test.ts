import { describe, expect, it } from 'vitest';
import { parseConfigJson } from '../../../src/broker/config/config-json.js';
import { usageMessage } from '../../helpers/usage-error.js';

const SOURCE = 'broker config /etc/broker.json';
const SECRET = 's3cr3t-in-the-config-text';

const messageOf = (text: string): string => usageMessage(() => parseConfigJson(text, SOURCE));

describe('parseConfigJson', () => {
  it('parses a valid config, strings holding braces, quotes and commas included', () => {
    expect(parseConfigJson('{"a": {"b": "x}{,\\"y"}, "c": [{"a": 1}, {"a": 2}], "d\\"e": 1}', SOURCE)).toEqual({
      a: { b: 'x}{,"y' },
      c: [{ a: 1 }, { a: 2 }],
      'd"e': 1,
    });
  });

  it('names the line and column of a syntax error, and never the text around it', () => {
    const message = messageOf(`{\n  "authUrl": "https://auth.example",\n  "clientSecret": ${SECRET}\n}`);
    expect(message).toBe(`${SOURCE} is not valid JSON: syntax error at line 3, column 19`);
    expect(messageOf('{\n  "a": 1,\n')).toBe(`${SOURCE} is not valid JSON: syntax error at line 3, column 1`);
    expect(messageOf('{"a": 1,}')).toBe(`${SOURCE} is not valid JSON: syntax error at line 1, column 9`);
    expect(messageOf('{"a": 1} x')).toBe(`${SOURCE} is not valid JSON: syntax error at line 1, column 10`);
    expect(messageOf('{"a": "\\q"}')).toBe(`${SOURCE} is not valid JSON: syntax error at line 1, column 8`);
    expect(messageOf('{"a": 01}')).toBe(`${SOURCE} is not valid JSON: syntax error at line 1, column 8`);
  });

  it('says what a byte order mark is and how to be rid of it', () => {
    expect(messageOf('\uFEFF{"a": 1}')).toMatch(/starts with a UTF-8 byte order mark \(BOM.*save it as UTF-8 without BOM/);
  });

  it('refuses a key given twice in one object, naming each by its path', () => {
    const text =
      '{"platforms": {"android": {"clientId": "a", "clientId": "b"}}, "cache": {}, "cache": {"marginSeconds": 30}, "x": [{"k": 1, "k": 2}]}';
    expect(messageOf(text)).toBe(`${SOURCE} gives a key twice in one object (only one may stay): platforms.android.clientId, cache, x[].k`);
    expect(parseConfigJson('{"a": {"k": 1}, "b": {"k": 1}}', SOURCE)).toEqual({ a: { k: 1 }, b: { k: 1 } });
  });
});
