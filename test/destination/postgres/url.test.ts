import { describe, expect, it } from 'vitest';
import { capabilitiesOf } from '../../../src/destination/open.js';
import { destinationSpec } from '../../../src/destination/spec.js';
import { parsePostgresUrl, resolveTarget } from '../../../src/destination/postgres/url.js';
import { UsageError } from '../../../src/errors.js';

const parse = (text: string) => parsePostgresUrl(text, '-o/--output');

describe('a PostgreSQL -o', () => {
  it('is read from postgresql:// and postgres:// alike, its password kept out of every name it is shown by', () => {
    const spec = destinationSpec('postgres://loader:S3cret-Pw@db.example:6543/metrics?schema=area_metrics&sslmode=require', '-o');
    expect(spec).toMatchObject({ kind: 'postgres', stateUrl: undefined });
    expect(capabilitiesOf(spec)).toMatchObject({ files: false, formats: ['csv'], state: 'inside' });
    if (spec.kind !== 'postgres') throw new Error('not a database');
    expect(spec.database).toMatchObject({ host: 'db.example', port: 6543, database: 'metrics', user: 'loader', password: 'S3cret-Pw' });
    expect([spec.name, spec.output]).toEqual([
      'postgres://loader@db.example:6543/metrics?schema=area_metrics&sslmode=require',
      'postgres://loader@db.example:6543/metrics?schema=area_metrics&sslmode=require',
    ]);
    expect(destinationSpec('postgresql://db/metrics', '-o').kind).toBe('postgres');
  });

  it('refuses what libpq would not take: an unknown parameter, an sslmode or port out of range', () => {
    expect(() => parse('postgresql://db/metrics?schema=s&search_path=x')).toThrow(/unknown parameter search_path/);
    expect(() => parse('postgresql://db/metrics?sslmode=sometimes')).toThrow(/sslmode "sometimes" is not one of disable, allow/);
    expect(() => parse('postgresql://db:99999/metrics')).toThrow(UsageError);
    expect(() => parse('postgresql://db/m?connect_timeout=soon')).toThrow(/connect_timeout is whole seconds/);
  });

  it('refuses an odd spelling in one line, never echoing a password: a stray %, an empty or overlong schema', () => {
    expect(() => parse('postgresql://loader:S3cr%zz@db/metrics')).toThrow(
      new UsageError(
        '-o/--output: the password of the PostgreSQL URL has a malformed percent-encoding (a % not followed by two hex digits)',
      ),
    );
    expect(() => parse('postgresql://lo%ader@db/metrics')).toThrow(/the user of the PostgreSQL URL has a malformed percent-encoding/);
    expect(() => parse('postgresql://db/met%zrics')).toThrow(/the database of the PostgreSQL URL has a malformed/);
    expect(() => parse('postgresql://db/metrics?schema=')).toThrow(/schema= names no schema; leave it out for public/);
    expect(() => parse(`postgresql://db/metrics?schema=${'s'.repeat(64)}`)).toThrow(/longer than PostgreSQL's 63 bytes/);
    expect(parse(`postgresql://db/metrics?schema=${'s'.repeat(63)}`).schema).toHaveLength(63);
    expect(parse('postgresql://loader:p%40ss@[::1]:6543/m%C3%A9trics')).toMatchObject({
      host: '::1',
      password: 'p@ss',
      database: 'métrics',
    });
    expect(() => parse('postgresql://db/metrics?schema=a%00b')).toThrow(/schema "a\\u0000b" has a control character/);
    expect(() => parse('postgresql://db/metrics?connect_timeout=99999999999')).toThrow(/connect_timeout is whole seconds up to 86400/);
  });

  it('names an unknown parameter by its key alone: its value may be a password', () => {
    let message = '';
    try {
      parse('postgresql://loader@db/metrics?schema=s&password=Hunter2-Pw');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^-o\/--output: unknown parameter password in postgresql:\/\/loader@db\/metrics\?\.\.\. \(known: /);
    expect(message).not.toContain('Hunter2');
  });

  it("fills what it leaves out from libpq's PG* variables, then libpq's defaults", () => {
    const env = {
      PGHOST: 'pg.internal',
      PGPORT: '5433',
      PGUSER: 'etl',
      PGDATABASE: 'dw',
      PGSSLMODE: 'verify-full',
      PGCONNECT_TIMEOUT: '3',
    };
    expect(resolveTarget(parse('postgresql://?schema=am'), env)).toMatchObject({
      host: 'pg.internal',
      port: 5433,
      user: 'etl',
      database: 'dw',
      schema: 'am',
      sslmode: 'verify-full',
      connectTimeoutMs: 3000,
    });
    // The URL beats the environment; the user's name is the database's when neither names one.
    expect(resolveTarget(parse('postgresql://me@here:7000?sslmode=disable'), env)).toMatchObject({
      host: 'here',
      port: 7000,
      user: 'me',
      database: 'dw',
      sslmode: 'disable',
    });
    expect(resolveTarget(parse('postgresql://'), { USER: 'ops' })).toMatchObject({
      host: 'localhost',
      port: 5432,
      user: 'ops',
      database: 'ops',
      schema: 'public',
      sslmode: 'prefer',
    });
    // libpq's query-parameter spellings of the same fields.
    expect(resolveTarget(parse('postgresql://?host=/run/pg&port=5999&user=u&dbname=d'), {})).toMatchObject({
      host: '/run/pg',
      port: 5999,
      user: 'u',
      database: 'd',
    });
  });

  it("takes libpq's options (the URL's, else PGOPTIONS, never merged) and names the command in the application name", () => {
    const url = parse('postgresql://db/m?options=-c%20lock_timeout%3D5s');
    expect(resolveTarget(url, { PGOPTIONS: '-c statement_timeout=0' }, 'traffic')).toMatchObject({
      options: '-c lock_timeout=5s',
      applicationName: 'area-metrics traffic',
    });
    expect(resolveTarget(parse('postgresql://db/m'), { PGOPTIONS: '-c statement_timeout=0' }).options).toBe('-c statement_timeout=0');
    expect(resolveTarget(parse('postgresql://db/m'), {}).options).toBeUndefined();
    expect(resolveTarget(parse('postgresql://db/m?application_name=nightly'), {}, 'all').applicationName).toBe('nightly');
  });
});
