import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, type LogFormat } from '../../src/log/logger.js';

const CLIENT_ID = 'acme';
// A quote and a backslash: a JSON line spells them `\"` and `\\`, which a search for the raw text does not find.
const SECRET = 'Top"Se\\cret-42';
const BASIC = Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64');

function capture(format: LogFormat): { lines: () => string[]; log: ReturnType<typeof createLogger> } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  const log = createLogger({
    stream,
    format,
    level: 'debug',
    credentials: [{ clientId: CLIENT_ID, secret: SECRET }],
    now: () => new Date(0),
  });
  return { lines: () => text.split('\n').filter(Boolean), log };
}

/** Every spelling a secret can take in a text or JSON line. */
const FORBIDDEN = [SECRET, JSON.stringify(SECRET).slice(1, -1), encodeURIComponent(SECRET), BASIC];

describe('createLogger redaction', () => {
  it.each(['text', 'json'] as const)('masks every spelling of the secret in a %s line, message and fields alike', (format) => {
    const { lines, log } = capture(format);
    log.error(`400 bad header "Basic ${BASIC}"`, { detail: `client_secret=${encodeURIComponent(SECRET)}`, nested: [{ echoed: SECRET }] });
    log.warn(`echoed ${SECRET} and ${JSON.stringify(SECRET)}`);
    const written = lines();
    expect(written).toHaveLength(2);
    for (const line of written) for (const spelling of FORBIDDEN) expect(line).not.toContain(spelling);
    expect(written[0]).toContain('Basic ***');
    if (format === 'json') {
      const first = JSON.parse(written[0]!) as { msg: string; detail: string; nested: { echoed: string }[] };
      expect(first).toMatchObject({
        level: 'error',
        msg: '400 bad header "Basic ***"',
        detail: 'client_secret=***',
        nested: [{ echoed: '***' }],
      });
      expect((JSON.parse(written[1]!) as { msg: string }).msg).toBe('echoed *** and "***"');
    } else {
      expect(written[1]).toBe('warn: echoed *** and "***"');
    }
  });

  it('leaves lines without a secret as they are', () => {
    const { lines, log } = capture('json');
    log.info('imported 3 units', { units: 3, path: 'out/a.csv' });
    expect(lines()).toEqual(['{"time":"1970-01-01T00:00:00.000Z","level":"info","msg":"imported 3 units","units":3,"path":"out/a.csv"}']);
  });
});

describe('createLogger timestamps', () => {
  it('starts every text line with the ISO 8601 UTC time when asked (off a terminal), and not otherwise', () => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString('utf8');
        done();
      },
    });
    createLogger({ stream, format: 'text', level: 'info', timestamps: true, now: () => new Date('2026-11-21T02:30:00.123Z') }).warn(
      'traffic 2026-11-20: late',
    );
    createLogger({ stream, format: 'text', level: 'info', now: () => new Date('2026-11-21T02:30:00.123Z') }).info('plain');
    expect(text.split('\n')).toEqual(['2026-11-21T02:30:00.123Z warn: traffic 2026-11-20: late', 'plain', '']);
  });
});
