import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../helpers/ports.js';
import { postgresOwner, startPostgres, warnIfPostgresMissing, type TestPostgres } from '../helpers/postgres.js';
import { sandboxRows, tableRows } from '../helpers/postgres-rows.js';
import { clockedCli, noonToday } from '../helpers/sandbox-clock.js';
import { SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { mountTmpfs, tmpfsUnavailable } from '../helpers/tmpfs.js';

/**
 * What goes wrong with a database, each as one clear line and its exit code, with nothing half-written: a server not
 * there (4), a password rejected or missing (3), a role without the privileges, a statement timeout, a full disk (7),
 * a table with other columns (2). And what goes right with the least privileges and a password file.
 */
const skip = warnIfPostgresMissing('the PostgreSQL error tests');
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK, SECRET_ENV);
const DAY = new Date(CLOCK.getTime() - 3 * 86_400_000).toISOString().slice(0, 10);
const DATABASE = 'errors';
const PASSWORDS = { loader: 'Loader-Pass-9z', writer: 'Writer-Pass-3y', nobody: 'Nobody-Pass-1x', tls_only: 'Tls-Pass-7w' } as const;

let server: TestPostgres;
let home: string;
const sandbox = useSandbox({ stores: 4, zones: 3, days: 8, seed: 9, clientId: 'pg-errors', now: () => CLOCK });
const auth = () => ['--base-url', sandbox.url, '--client-id', sandbox.clientId];
/** The environment of a run as `role`: no password unless given, no password file but the one named. */
const envOf = (extra: Record<string, string> = {}) => ({ PGPASSWORD: undefined, PGPASSFILE: join(home, 'none'), HOME: home, ...extra });
const urlOf = (user: string, schema: string) => server.url({ user, database: DATABASE, params: { schema } });

/** The error lines of an import's log, without their level. */
const errorsIn = (stderr: string): string[] =>
  stderr.split('\n').flatMap((line) => (line.startsWith('error: ') ? [line.slice('error: '.length)] : []));

describe.skipIf(skip)('-o postgresql:// when something is wrong', () => {
  beforeAll(async () => {
    [server, home] = await Promise.all([startPostgres({ tls: true }), mkdtemp(join(tmpdir(), 'pg-home-'))]);
    await server.query(`CREATE DATABASE ${DATABASE}`);
    for (const [role, password] of Object.entries(PASSWORDS)) await server.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await server.query(`GRANT CREATE ON DATABASE ${DATABASE} TO loader, tls_only`);
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), home === undefined ? undefined : rm(home, { recursive: true, force: true })]);
  });

  it('a server that cannot be reached: exit 4 after the retries, one line naming it, no password', async () => {
    const url = `postgresql://loader@127.0.0.1:${await closedPort()}/${DATABASE}`;
    const result = await runCli(['traffic', ...auth(), '--date', DAY, '-o', url, '--retries', '1'], {
      env: envOf({ PGPASSWORD: PASSWORDS.loader }),
    });
    expect(result.code).toBe(4);
    expect(errorsIn(result.stderr)).toEqual([
      expect.stringMatching(/^cannot prepare postgresql:\/\/loader@127\.0\.0\.1:\d+\/errors: cannot reach the server/),
    ]);
    expect(result.stderr).not.toContain(PASSWORDS.loader);
  });

  it('credentials: a wrong password or none is exit 3; the password file (0600) is read, one others can read is not', async () => {
    const url = urlOf('loader', 'loaded');
    const args = ['traffic', ...auth(), '--date', DAY, '-o', url];
    const wrong = await runCli(args, { env: envOf({ PGPASSWORD: 'Not-The-Password-0' }) });
    expect(wrong.code).toBe(3);
    expect(errorsIn(wrong.stderr)).toEqual([expect.stringContaining('credentials rejected')]);
    expect(wrong.stderr).not.toContain('Not-The-Password-0');

    const none = await runCli(args, { env: envOf() });
    expect(none.code).toBe(3);
    expect(errorsIn(none.stderr)).toEqual([expect.stringContaining('the server asks for a password and none is set')]);

    const file = join(home, 'pgpass');
    await writeFile(file, `# the test's\n127.0.0.1:${server.port}:${DATABASE}:other:x\n*:${server.port}:*:loader:${PASSWORDS.loader}\n`, {
      mode: 0o644,
    });
    await chmod(file, 0o644);
    expect((await runCli(args, { env: envOf({ PGPASSFILE: file }) })).code).toBe(3);
    await chmod(file, 0o600);
    const fromFile = await runCli(args, { env: envOf({ PGPASSFILE: file }) });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(await tableRows(server, { database: DATABASE, schema: 'loaded' }, 'traffic')).toEqual(sandboxRows(sandbox, 'traffic', [DAY]));
  });

  it("libpq's PG* variables fill what the URL leaves out; sslmode is honoured as libpq means it", async () => {
    const args = (url: string) => ['traffic', ...auth(), '--date', DAY, '-o', url];
    const pg = { PGHOST: '127.0.0.1', PGPORT: String(server.port), PGDATABASE: DATABASE };
    const fromEnv = await runCli(args('postgresql://?schema=from_env'), {
      env: envOf({ ...pg, PGUSER: 'loader', PGPASSWORD: PASSWORDS.loader }),
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(await tableRows(server, { database: DATABASE, schema: 'from_env' }, 'traffic')).toEqual(sandboxRows(sandbox, 'traffic', [DAY]));

    // tls_only is let in over TLS alone: prefer (the default) and require encrypt, disable does not.
    const tls = (params: string, extra: Record<string, string> = {}) =>
      runCli(args(`postgresql://tls_only@127.0.0.1:${server.port}/${DATABASE}?schema=tls${params}`), {
        env: envOf({ PGPASSWORD: PASSWORDS.tls_only, ...extra }),
      });
    expect((await tls('')).code).toBe(0);
    expect((await tls('&sslmode=require')).code).toBe(0);
    expect((await tls('', { PGSSLMODE: 'require' })).code).toBe(0);
    const plain = await tls('&sslmode=disable');
    expect(plain.code).toBe(3);
    expect(errorsIn(plain.stderr)).toEqual([expect.stringMatching(/credentials rejected; .*\(28000: .*no encryption\)/)]);
    // verify-full checks the certificate: against the system's CAs a self-signed one fails, against its own it passes.
    const unverified = await tls('&sslmode=verify-full');
    expect(unverified.code).toBe(4);
    expect(errorsIn(unverified.stderr)).toEqual([
      expect.stringContaining("the server's certificate cannot be verified; name its CA with sslrootcert"),
    ]);
    const verified = await tls(`&sslmode=verify-full&sslrootcert=${encodeURIComponent(server.certificate!)}`);
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('the least privileges: USAGE on a made schema and SELECT, INSERT, DELETE on its tables are enough; without them, exit 7; a schema not there, exit 2', async () => {
    const made = await runCli(['all', ...auth(), '--date', DAY, '-o', urlOf('postgres', 'shared')]);
    expect(made.code, made.stderr).toBe(0);
    await server.query('GRANT USAGE ON SCHEMA shared TO writer', [], DATABASE);
    await server.query('GRANT SELECT, INSERT, DELETE ON ALL TABLES IN SCHEMA shared TO writer', [], DATABASE);
    sandbox.setPublishing({ corrected: [{ day: DAY, revision: 2 }] });
    const written = await runCli(['all', ...auth(), '--date', DAY, '-o', urlOf('writer', 'shared')], {
      env: envOf({ PGPASSWORD: PASSWORDS.writer }),
    });
    expect(written.code, written.stderr).toBe(0);
    expect(await tableRows(server, { database: DATABASE, schema: 'shared' }, 'unique-users')).toEqual(
      sandboxRows(sandbox, 'unique-users', [DAY]),
    );

    // A schema that is there, its tables not granted: exit 7, naming what to grant.
    const refused = await runCli(['traffic', ...auth(), '--date', DAY, '-o', urlOf('nobody', 'shared')], {
      env: envOf({ PGPASSWORD: PASSWORDS.nobody }),
    });
    expect(refused.code).toBe(7);
    expect(errorsIn(refused.stderr)).toEqual([
      expect.stringMatching(/permission denied; grant the role CREATE on the schema.*\(42501: permission denied/),
    ]);
    // A schema that is not there (a typo) and a role that may not make it: exit 2, saying so and what would make it.
    const mistyped = await runCli(['traffic', ...auth(), '--date', DAY, '-o', urlOf('nobody', 'shraed')], {
      env: envOf({ PGPASSWORD: PASSWORDS.nobody }),
    });
    expect(mistyped.code).toBe(2);
    expect(errorsIn(mistyped.stderr)).toEqual([
      expect.stringMatching(
        /the schema does not exist and the role may not create it; check the URL's \?schema=, or create it \(CREATE SCHEMA .*\(3F000: schema "shraed" does not exist\)$/,
      ),
    ]);
  });

  it('a statement timeout rolls the unit back: exit 7, its old rows and coverage kept, a new day pending', async () => {
    const at = { database: DATABASE, schema: 'timed' };
    const next = new Date(Date.parse(DAY) + 86_400_000).toISOString().slice(0, 10);
    const loaded = await runCli(['traffic', ...auth(), '--date', DAY, '-o', urlOf('postgres', 'timed')]);
    expect(loaded.code, loaded.stderr).toBe(0);
    const coverage = () => server.query('SELECT metric, day::text, store, sha256, rows FROM timed.area_metrics_units', [], DATABASE);
    const [rowsBefore, coverageBefore] = [await tableRows(server, at, 'traffic'), await coverage()];
    await server.query('ALTER ROLE loader SET statement_timeout = 300', [], DATABASE);
    await server.query(
      'GRANT USAGE ON SCHEMA timed TO loader; GRANT SELECT, INSERT, DELETE ON ALL TABLES IN SCHEMA timed TO loader',
      [],
      DATABASE,
    );
    const blocker = await server.connect(DATABASE);
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE timed.traffic IN ACCESS EXCLUSIVE MODE');
      sandbox.setPublishing({ corrected: [{ day: DAY, revision: 3 }] });
      const args = ['traffic', ...auth(), '--from', DAY, '--to', next, '-o', urlOf('loader', 'timed')];
      const timedOut = await runCli(args, { env: envOf({ PGPASSWORD: PASSWORDS.loader }) });
      expect(timedOut.code).toBe(7);
      expect(errorsIn(timedOut.stderr)).toEqual([
        expect.stringMatching(
          /^traffic \S+: cannot load timed\.traffic .*: statement cancelled .*\(57014: canceling statement due to statement timeout\)$/,
        ),
        expect.stringMatching(/^imported 0 of 2 units, .*1 failed, .*1 not tried, the output could not be written$/),
      ]);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
      await server.query('ALTER ROLE loader RESET statement_timeout', [], DATABASE);
    }
    // The corrected day keeps its old rows and the coverage that describes them; the new day is pending.
    expect(await tableRows(server, at, 'traffic')).toEqual(rowsBefore);
    expect(await coverage()).toEqual(coverageBefore);
    const status = await runCli(['status', '-o', urlOf('postgres', 'timed'), '--json']);
    const report = JSON.parse(status.stdout) as { metrics: { metric: string; lastCompleteDay: string; pending: { day: string }[] }[] };
    const traffic = report.metrics.find((metric) => metric.metric === 'traffic');
    expect([traffic?.lastCompleteDay, traffic?.pending.map((pending) => pending.day)]).toEqual([DAY, [next]]);
  });

  it('a table whose columns differ is exit 2 naming them, never altered', async () => {
    await server.query('CREATE SCHEMA odd', [], DATABASE);
    const columns = 'store_code text, date timestamptz, day date, granularity text, zone text, traffic_pct double precision, note text';
    await server.query(`CREATE TABLE odd.traffic (${columns})`, [], DATABASE);
    const result = await runCli(['traffic', ...auth(), '--date', DAY, '-o', urlOf('postgres', 'odd')]);
    expect(result.code, result.stderr).toBe(2);
    expect(errorsIn(result.stderr)).toEqual([
      expect.stringContaining(
        "table odd.traffic has other columns than the tool writes: traffic_pct is double precision, not numeric(6,5); note is not the tool's",
      ),
    ]);
    const after = await server.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM pg_attribute WHERE attrelid = 'odd.traffic'::regclass AND attnum > 0",
      [],
      DATABASE,
    );
    expect(after[0]?.n).toBe('7');
  });

  it.skipIf(tmpfsUnavailable() !== undefined)('a full disk under the table: exit 7 naming it, nothing half-written', async () => {
    const disk = mountTmpfs(1024);
    try {
      const owner = await postgresOwner();
      const location = join(disk.path, 'tablespace');
      await mkdir(location);
      if (owner !== undefined) await chown(location, owner.uid, owner.gid);
      await server.query(`CREATE TABLESPACE tiny LOCATION '${location}'`);
      await server.query('CREATE SCHEMA full_disk', [], DATABASE);
      const columns =
        'store_code text NOT NULL, date timestamptz NOT NULL, day date NOT NULL, granularity text NOT NULL, zone text NOT NULL, unique_users bigint NOT NULL';
      await server.query(`CREATE TABLE full_disk.unique_users (${columns}) TABLESPACE tiny`, [], DATABASE);
      await disk.fill();
      const result = await runCli(['unique-users', ...auth(), '--date', DAY, '-o', urlOf('postgres', 'full_disk')]);
      expect(result.code).toBe(7);
      expect(errorsIn(result.stderr)).toEqual([
        expect.stringMatching(
          /^unique-users \S+: cannot load full_disk\.unique_users .*: the server's disk is full; .*\(53100: could not extend file/,
        ),
        expect.stringMatching(/^imported 0 of 1 units, .*1 failed/),
      ]);
      expect(await tableRows(server, { database: DATABASE, schema: 'full_disk' }, 'unique-users')).toEqual([]);
      await disk.unfill();
      await server.query('DROP TABLE full_disk.unique_users', [], DATABASE);
      await server.query('DROP TABLESPACE tiny');
    } finally {
      disk.unmount();
    }
  });
});
