import { describe, expect, it } from 'vitest';
import { boundExceeded, databaseError, noAnswer, refusedOptions, tableOf } from '../../../src/destination/postgres/failures.js';
import { AuthError, exitCodeFor, OutputError, UnavailableError, UsageError } from '../../../src/errors.js';

describe("the database's failures", () => {
  const coded = (code: string, message = 'server words') => Object.assign(new Error(message), { code });
  it.each([
    ['08006', UnavailableError],
    ['ECONNREFUSED', UnavailableError],
    ['28P01', AuthError],
    ['28000', AuthError],
    ['42501', OutputError],
    ['53100', OutputError],
    ['57014', OutputError],
    ['25006', OutputError],
    ['55P03', OutputError],
    ['42703', UsageError],
    ['42P01', UsageError],
    ['XX000', OutputError],
    ['P0001', OutputError],
  ])('%s is %o, one line naming the server and the reason', (code, type) => {
    const error = databaseError(coded(code), 'cannot load x into', 'postgresql://u@h:5432/d');
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).toMatch(new RegExp(`^cannot load x into postgresql://u@h:5432/d: .*\\(${code}: server words\\)$`));
  });

  it("leaves what is not the server's answer (a bug) as it is: exit 1", () => {
    const odd = coded('EWEIRD');
    expect(databaseError(odd, 'x', 'y')).toBe(odd);
    expect(exitCodeFor(databaseError(new TypeError('bug'), 'x', 'y'))).toBe(1);
  });
});

describe('a wait a bound ended', () => {
  const bounds = { lockTimeoutMs: 1500, statementTimeoutMs: 300, answerMs: 1300 };
  const coded = (code: string, message: string) => Object.assign(new Error(message), { code });

  it('names the table of the statement that waited, as the tool qualifies every table, or none when it names none', () => {
    expect(tableOf('DELETE FROM "am1"."traffic" WHERE day = $1')).toBe('am1.traffic');
    expect(tableOf('SELECT count(*) AS rows FROM "we""ird"."unique_users" WHERE day = $1')).toBe('we"ird.unique_users');
    expect(tableOf('COPY "am1"."traffic" ("store_code") FROM STDIN WITH (FORMAT csv)')).toBe('am1.traffic');
    expect(tableOf('INSERT INTO "am1".area_metrics_units (metric) VALUES ($1)')).toBe('am1.area_metrics_units');
    expect(tableOf('CREATE TABLE IF NOT EXISTS "am1".area_metrics_runs (run_id text)')).toBe('am1.area_metrics_runs');
    expect(tableOf('SELECT pg_try_advisory_lock(1, 2)')).toBeUndefined();
  });

  it('a lock past lock_timeout and a statement past statement_timeout: exit 7, the bound and how to raise it', () => {
    const lock = boundExceeded(
      coded('55P03', 'canceling statement due to lock timeout'),
      'cannot load x into',
      'pg://h/d',
      bounds,
      'DELETE FROM "s"."traffic"',
    );
    expect(lock).toBeInstanceOf(OutputError);
    expect(lock?.message).toBe(
      "cannot load x into pg://h/d: a lock on s.traffic was not granted within lock_timeout (1.5 s): another session holds it (pg_locks says which); run again once it ends, or raise lock_timeout in the URL's options or PGOPTIONS (55P03: canceling statement due to lock timeout)",
    );
    const statement = boundExceeded(coded('57014', 'canceling statement due to statement timeout'), 'cannot x', 'pg://h/d', bounds, '');
    expect(statement?.message).toMatch(
      /^cannot x pg:\/\/h\/d: statement cancelled when it ran past statement_timeout \(300 ms\); run again, or raise/,
    );
    // Cancelled by a request (an operator's pg_cancel_backend): not a bound, the table's words stand.
    expect(boundExceeded(coded('57014', 'canceling statement due to user request'), 'x', 'y', bounds, '')).toBeUndefined();
  });

  it("a setting of the URL's options the server refuses at startup is exit 2; without options, not ours to explain", () => {
    const refused = coded('42704', 'unrecognized configuration parameter "lock_timout"');
    expect(refusedOptions(refused, 'pg://h/d', '-c lock_timout=1s')).toBeInstanceOf(UsageError);
    expect(refusedOptions(refused, 'pg://h/d', undefined)).toBeUndefined();
    expect(noAnswer('cannot x', 'pg://h/d', 1300, bounds).message).toMatch(
      /^cannot x pg:\/\/h\/d: no answer from the server in 1\.3 s \(statement_timeout 300 ms and a margin\)/,
    );
  });
});
