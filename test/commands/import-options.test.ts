import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { capabilitiesOf } from '../../src/destination/open.js';
import { importConfigOf, runConfigOf } from '../helpers/import-config.js';
import { UsageError } from '../../src/errors.js';
import { useTempDirs } from '../helpers/tmp.js';

const required = { baseUrl: 'https://api.example.test', clientId: 'id', clientSecret: 'secret' };
const tempDir = useTempDirs('options-');
let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});

describe('the import config', () => {
  it('applies the documented defaults', async () => {
    const config = await importConfigOf(required, {}, 1);
    expect(capabilitiesOf(config.output.destination).files).toBe(true);
    expect(config).toMatchObject({
      dryRun: false,
      window: { days: { kind: 'default' } },
      output: {
        destination: { kind: 'folder', dir: './area-metrics-data', name: './area-metrics-data' },
        shape: 'rows',
        onInvalid: 'fail',
      },
      api: {
        pageSize: 1000,
        concurrency: 4,
        retries: 5,
        timeoutMs: 60_000,
        credentials: { clientId: 'id', clientSecret: 'secret' },
      },
      log: { level: 'info', format: 'text' },
    });
    // The settings a folder keeps are the state's unless the run states them.
    expect([config.output.format, config.output.layout, config.window.dayMode]).toEqual([undefined, undefined, undefined]);
  });

  it('reads env vars, lets flags win, and treats empty env vars as unset', async () => {
    const env = {
      AREA_METRICS_BASE_URL: 'https://env.example.test',
      AREA_METRICS_CLIENT_ID: 'env-id',
      AREA_METRICS_CLIENT_SECRET: 'env-secret',
      AREA_METRICS_OUTPUT: '',
    };
    const fromEnv = await importConfigOf({}, env, 1);
    expect(fromEnv.api.baseUrl.href).toBe('https://env.example.test/');
    expect(runConfigOf(fromEnv).api.credentials).toEqual({ clientId: 'env-id', clientSecret: 'env-secret' });
    expect(fromEnv.output.destination).toMatchObject({ kind: 'folder', dir: './area-metrics-data' });
    const flagsWin = await importConfigOf({ clientId: 'flag-id', output: '-' }, env, 1);
    expect(runConfigOf(flagsWin).api.credentials.clientId).toBe('flag-id');
    expect(flagsWin.output.destination).toMatchObject({ kind: 'stream' });
    expect(capabilitiesOf(flagsWin.output.destination).files).toBe(false);
    expect(flagsWin.output.format).toBe('ndjson');
  });

  it('reads the secret from a file, trimming one trailing newline', async () => {
    const file = join(dir, 'secret');
    await writeFile(file, 'from-file\n');
    const config = await importConfigOf({ ...required, clientSecret: undefined, clientSecretFile: file }, {}, 1);
    expect(runConfigOf(config).api.credentials.clientSecret).toBe('from-file');
  });

  it('needs no credentials for --dry-run', async () => {
    const config = await importConfigOf({ baseUrl: 'https://api.example.test', dryRun: true }, {}, 3);
    expect(config.dryRun).toBe(true);
    expect(config.api).not.toHaveProperty('credentials');
  });

  it.each([
    [{ date: '2026-11-01', from: '2026-11-01' }, /--date cannot be combined/],
    [{ to: '2026-11-01' }, /--to needs --from/],
    [{ from: '2026-11-02', to: '2026-11-01' }, /is after --to/],
    [{ date: '2026-02-30' }, /not a valid date/],
    [{ pageSize: '20000' }, /--page-size "20000" must be a whole number from 1 to 10000/],
    [{ pageSize: '0' }, /--page-size/],
    [{ concurrency: 'four' }, /--concurrency/],
    [{ timeout: '-1' }, /--timeout/],
    [{ clientSecretFile: '/nonexistent/secret' }, /--client-secret-file and|cannot be combined/],
    [{ shape: 'results', format: 'csv' }, /--shape results is NDJSON only/],
    [{ catchUp: true, output: '-' }, /--catch-up with -o - needs --state/],
    [{ catchUp: true, date: '2026-11-01' }, /--catch-up cannot be combined/],
    [{ baseUrl: undefined }, /missing --base-url/],
    [{ clientId: undefined }, /missing --client-id/],
    [{ clientSecret: undefined }, /missing client secret: pass --client-secret or --client-secret-file/],
    [{ quiet: true, verbose: true }, /--quiet and --verbose/],
    [{ output: '' }, /-o\/--output needs a folder, s3:\/\/bucket\/prefix, postgresql:\/\/..., or - for stdout/],
    [{ output: 's3://Not_A_Bucket/x' }, /--output "s3:\/\/Not_A_Bucket\/x": "Not_A_Bucket" is not a bucket name/],
    [{ state: 's3://bucket-only' }, /--state "s3:\/\/bucket-only" names a bucket but no object/],
    [{ output: '  ' }, /-o\/--output needs a folder/],
    [{ state: '' }, /--state needs a file path/],
    [{ timeout: '0.0001' }, /--timeout "0.0001" must be a number of seconds from 0.001 to 3600/],
    [{ timeout: '1e3' }, /--timeout/],
    [{ timeout: '0x10' }, /--timeout/],
    [{ timeout: '3600.001' }, /--timeout/],
    [{ lookback: '2' }, /--lookback needs --catch-up/],
    [{ catchUp: true, lookback: '-1' }, /--lookback "-1" must be a whole number from 0 to 366/],
    [{ settleDays: '0' }, /--settle-days "0" must be a whole number from 1/],
    [
      { output: 'postgresql://db/m', format: 'csv' },
      /-f, --layout and --shape results describe files; a PostgreSQL output has typed tables/,
    ],
    [{ output: 'postgresql://db/m', layout: 'hive' }, /a PostgreSQL output has typed tables/],
    [{ output: 'postgresql://db/m', state: './state.json' }, /keeps its state in the database, beside the data; drop --state/],
    [{ output: 'postgresql://db/m?schema=s&search_path=x' }, /unknown parameter search_path/],
  ])('%j is a usage error', async (overrides, message) => {
    const raw = { ...required, ...overrides };
    const error = await importConfigOf(raw, {}, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
  });

  it('-o s3://bucket/prefix is an object target; path-style from its flag or env var', async () => {
    const config = await importConfigOf({ ...required, output: 's3://acme-data/area/metrics/' }, {}, 3);
    expect(config.output.destination).toMatchObject({
      kind: 'bucket',
      name: 's3://acme-data/area/metrics/',
      location: { bucket: 'acme-data', prefix: 'area/metrics' },
      stateUrl: 's3://acme-data/area/metrics/.area-metrics-state.json',
    });
    expect(config.output.s3ForcePathStyle).toBe(false);
    expect((await importConfigOf(required, { AREA_METRICS_S3_FORCE_PATH_STYLE: 'true' }, 3)).output.s3ForcePathStyle).toBe(true);
    expect(
      (await importConfigOf({ ...required, s3ForcePathStyle: true }, { AREA_METRICS_S3_FORCE_PATH_STYLE: '0' }, 3)).output.s3ForcePathStyle,
    ).toBe(true);
    await expect(importConfigOf(required, { AREA_METRICS_S3_FORCE_PATH_STYLE: 'yes' }, 3)).rejects.toThrow(
      /AREA_METRICS_S3_FORCE_PATH_STYLE "yes" must be 1, true, 0 or false/,
    );
  });

  it('--catch-up carries --max-days and --lookback; --settle-days defaults to 3', async () => {
    const config = await importConfigOf({ ...required, catchUp: true, maxDays: '5', lookback: '2' }, {}, 3);
    expect(config.window.days).toEqual({ kind: 'catch-up', maxDays: 5, lookback: 2 });
    expect(config.judgement.settleDays).toBe(3);
    expect((await importConfigOf({ ...required, settleDays: '7' }, {}, 1)).judgement.settleDays).toBe(7);
  });

  it.each([
    ['1.0005', 1001],
    ['2.5', 2500],
    ['0.001', 1],
    ['3600', 3_600_000],
  ])('takes --timeout %s as %i whole milliseconds (timers refuse fractions)', async (timeout, timeoutMs) => {
    expect((await importConfigOf({ ...required, timeout }, {}, 1)).api.timeoutMs).toBe(timeoutMs);
  });

  it('refuses CSV on stdout for several metrics', async () => {
    await expect(importConfigOf({ ...required, output: '-', format: 'csv' }, {}, 3)).rejects.toThrow(/single metric/);
    await expect(importConfigOf({ ...required, output: '-', format: 'csv' }, {}, 1)).resolves.toMatchObject({
      output: { format: 'csv', destination: { kind: 'stream', name: 'stdout' } },
    });
  });

  it('names an unreadable secret file without echoing anything else', async () => {
    const error = await importConfigOf({ baseUrl: required.baseUrl, clientId: 'id', clientSecretFile: join(dir, 'missing') }, {}, 1).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toMatch(/cannot read the client secret file .*missing \(--client-secret-file\): ENOENT/);
  });
});
