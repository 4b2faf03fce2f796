/**
 * The disk fails, the data does not: the BUILT binary writing onto a small tmpfs that fills up or goes read-only,
 * and stdout onto /dev/full. A good file is never lost, a short one never lands under a final name, the state never
 * names a day whose file is not complete, and the run ends with exit 7 and one line naming the path and the reason.
 * The tmpfs tests need root (CI runs as root) and are skipped with the reason otherwise.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, cliEnv, stopAllClis, withoutTimestamps, type CliResult } from '../helpers/cli.js';
import { clockedCli, clockEnv, noonToday, daysBefore } from '../helpers/sandbox-clock.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { mountTmpfs, tmpfsUnavailable, type Tmpfs } from '../helpers/tmpfs.js';
import { dataFiles, listFiles, readTree, useTempDirs } from '../helpers/tmp.js';

const PAGE = 4096;

/** UTC day `n` days before today. */
/** One clock for the days the tests name, the runs and the sandbox: a run across midnight UTC changes nothing. */
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK, SECRET_ENV);

const daysAgo = daysBefore(CLOCK);

const tempDir = useTempDirs('reliability-disk-');

function metricRequestsSince(before: number): { path: string; query: Record<string, string> }[] {
  return sandbox.requests.slice(before).filter((request) => request.path.startsWith('/api/bi/area-metrics/'));
}

/** The run's stderr lines that report a failure; a stack trace or an internal error fails the test at once. */
function failureLines(result: CliResult): string[] {
  expect(result.stderr).not.toMatch(/internal error|^\s+at /m);
  return result.stderr.split('\n').filter((line) => line.includes('cannot '));
}

// 30 stores: a day's file is a few pages, so a disk with one page free takes part of it and then fails.
const sandbox = useSandbox({ port: 0, stores: 30, zones: 6, days: 10, clientId: 'disk-client', now: () => CLOCK });

describe('on a small tmpfs', () => {
  let disk: Tmpfs | undefined;

  beforeEach((context) => {
    const reason = tmpfsUnavailable();
    if (reason !== undefined) context.skip(reason);
    disk = mountTmpfs(1024);
  });

  afterEach(async () => {
    await stopAllClis();
    disk?.unmount();
    disk = undefined;
  });

  function mounted(): Tmpfs {
    if (!disk) throw new Error('no tmpfs mounted');
    return disk;
  }

  it('import a day, fill the disk, re-run: exit 7, one line naming the file and "disk full"; every old file byte-identical', async () => {
    const out = join(mounted().path, 'out');
    const day = daysAgo(2);
    const first = await runCli(importArgs(sandbox, 'all', out, '--date', day));
    expect(first.code, first.stderr).toBe(0);
    const before = await readTree(out);
    expect(before.get(`unique-users/${day}.csv`)?.length).toBeGreaterThan(2 * PAGE);

    await mounted().fill(PAGE);
    // Corrected data: the same bytes would leave every file untouched and need no space at all.
    sandbox.setPublishing({ corrected: [{ day, revision: 1 }] });
    const result = await runCli(importArgs(sandbox, 'all', out, '--date', day));
    expect(result.code).toBe(7);
    const path = join(out, 'unique-users', `${day}.csv`);
    expect(failureLines(result)).toEqual([
      `error: unique-users ${day}: cannot write ${path}: disk full (ENOSPC); free some space and run again`,
    ]);
    expect(result.stderr).toMatch(
      /imported 0 of 3 units, .*; 1 failed, first: unique-users .*; 2 not tried, the output could not be written/,
    );
    // Same data files, same bytes, and no temp file (readTree lists hidden files too).
    expect(await readTree(out)).toEqual(before);
  });

  it('a state that cannot be written once the day is judged: the unit is committed once, as failed (no rows counted, no "done" line); exit 7', async () => {
    const day = daysAgo(3);
    const reference = await tempDir();
    expect((await runCli(importArgs(sandbox, 'traffic', reference, '--date', day))).code).toBe(0);
    const pages = Math.ceil((await stat(join(reference, 'traffic', `${day}.csv`))).size / PAGE);

    // Room for the state as the run starts (the days it is asked for), the coverage table written with it, and the
    // data file, not for the state's next copy: the day's judgement cannot be recorded.
    const out = join(mounted().path, 'out');
    await mounted().fill((2 + pages) * PAGE);
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--date', day));
    expect(result.code).toBe(7);
    expect(failureLines(result)).toEqual([
      `error: traffic ${day}: cannot write ${join(out, '.area-metrics-state.json')}: disk full (ENOSPC); free some space and run again`,
    ]);
    expect(result.stderr).not.toMatch(/ rows from /);
    // No warning: the secret comes from the environment (a flag's warning would be counted, as every warning line is).
    expect(result.stderr).toMatch(/^error: imported 0 of 1 units, 0 rows in [\d.]+ s, \d+ requests?; 1 failed, first: traffic /m);
    // The state was never told the day is complete.
    expect(await readFile(join(out, '.area-metrics-state.json'), 'utf8')).not.toContain('"complete"');
  });

  it('a disk without a free byte: exit 7 before any request', async () => {
    const out = join(mounted().path, 'out');
    const day = daysAgo(2);
    expect((await runCli(importArgs(sandbox, 'traffic', out, '--date', day))).code).toBe(0);
    const before = await readTree(out);
    await mounted().fill();
    const requests = sandbox.requests.length;
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--date', day));
    expect(result.code).toBe(7);
    expect(failureLines(result)).toEqual([`error: cannot write to folder ${out}: disk full (ENOSPC); free some space and run again`]);
    expect(metricRequestsSince(requests)).toEqual([]);
    expect(await readTree(out)).toEqual(before);
  });

  it('a backfill that fills the disk: complete days stay, the state names only them, fetching stops; exit 7', async () => {
    const days = [7, 6, 5, 4, 3, 2].map(daysAgo);
    const reference = await tempDir();
    const args = (out: string): string[] =>
      importArgs(sandbox, 'traffic', out, '--from', days[0] as string, '--to', days[5] as string, '--concurrency', '1');
    expect((await runCli(args(reference))).code).toBe(0);
    const pages = await Promise.all(days.map(async (day) => Math.ceil((await stat(join(reference, 'traffic', `${day}.csv`))).size / PAGE)));
    expect(pages.every((count) => count >= 2)).toBe(true);

    // Room for the first two days, the state and the coverage table (each with its temp copy while it is replaced),
    // not for the third.
    const out = join(mounted().path, 'out');
    await mounted().fill(((pages[0] as number) + (pages[1] as number) + 4) * PAGE);
    const requests = sandbox.requests.length;
    const result = await runCli(args(out));
    expect(result.code).toBe(7);
    const lines = failureLines(result);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/: disk full \(ENOSPC\); free some space and run again$/);

    const written = (await listFiles(out)).filter((file) => file.startsWith('traffic/'));
    expect(written.length).toBeGreaterThanOrEqual(1);
    expect(written.length).toBeLessThan(days.length);
    // What is there is a prefix of the days, each file complete: the same bytes as the reference run.
    expect(written).toEqual(days.slice(0, written.length).map((day) => `traffic/${day}.csv`));
    for (const file of written) expect(await readFile(join(out, file))).toEqual(await readFile(join(reference, file)));
    expect((await listFiles(out)).filter((file) => file.endsWith('.tmp'))).toEqual([]);
    // The state records as complete only days whose file is complete; the others stay pending.
    const lastWritten = days[written.length - 1] as string;
    const state = JSON.parse(await readFile(join(out, '.area-metrics-state.json'), 'utf8')) as {
      metrics: { traffic: { complete: [string, string][]; pending: Record<string, unknown> } };
    };
    expect(state.metrics.traffic.complete).toEqual([[days[0], lastWritten]]);
    expect(Object.keys(state.metrics.traffic.pending)).toEqual(days.slice(written.length));
    // Fetching stopped: the failed day and at most the one after it (in flight) were asked for, nothing later.
    const asked = new Set(metricRequestsSince(requests).map((request) => (request.query.datetime_gte ?? '').slice(0, 10)));
    for (const day of days.slice(written.length + 2)) expect(asked.has(day), `${day} was fetched`).toBe(false);
    expect(result.stderr).toMatch(/ not tried, the output could not be written/);
  });

  it('a read-only output folder: exit 7 before any request; the old file is byte-identical', async () => {
    const out = join(mounted().path, 'out');
    await mkdir(join(out, 'traffic'), { recursive: true });
    await writeFile(join(out, 'traffic', `${daysAgo(2)}.csv`), 'old\n');
    mounted().readOnly();
    const requests = sandbox.requests.length;
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--from', daysAgo(6), '--to', daysAgo(2)));
    expect(result.code).toBe(7);
    expect(failureLines(result)).toEqual([
      `error: cannot write to folder ${out}: read-only file system (EROFS); mount it read-write or choose another folder`,
    ]);
    expect(metricRequestsSince(requests)).toEqual([]);
    expect(await readFile(join(out, 'traffic', `${daysAgo(2)}.csv`), 'utf8')).toBe('old\n');
  });

  it('--state on a read-only file system: exit 7 before any request; nothing written to the output folder', async () => {
    const out = await tempDir();
    mounted().readOnly();
    const stateFolder = join(mounted().path, 'state');
    const requests = sandbox.requests.length;
    const result = await runCli(
      importArgs(sandbox, 'traffic', out, '--from', daysAgo(6), '--to', daysAgo(2), '--state', join(stateFolder, 'state.json')),
    );
    expect(result.code).toBe(7);
    expect(failureLines(result)).toEqual([
      `error: cannot create folder ${stateFolder}: read-only file system (EROFS); mount it read-write or choose another folder`,
    ]);
    expect(metricRequestsSince(requests)).toEqual([]);
    expect(await dataFiles(out)).toEqual([]);
  });
});

/** Runs the built binary with its stdout on /dev/full, where every write fails with ENOSPC. */
async function runOntoFullDisk(args: readonly string[]): Promise<CliResult> {
  const full = openSync('/dev/full', 'w');
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv({ ...clockEnv(CLOCK), ...SECRET_ENV }),
    stdio: ['ignore', full, 'pipe'],
  });
  closeSync(full);
  if (!child.stderr) throw new Error('no stderr pipe');
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
  );
  return { code, signal, stdout: '', stderr: withoutTimestamps(stderr), rawStderr: stderr };
}

describe.skipIf(!existsSync('/dev/full'))('stdout onto a full disk (`> /dev/full`)', () => {
  it('an import: exit 7, one line naming stdout and "disk full", fetching stops', async () => {
    const days = [7, 6, 5, 4, 3, 2].map(daysAgo);
    const requests = sandbox.requests.length;
    const result = await runOntoFullDisk(
      importArgs(sandbox, 'traffic', '-', '--from', days[0] as string, '--to', days[5] as string, '--concurrency', '1'),
    );
    expect(result.code).toBe(7);
    expect(failureLines(result)).toEqual([
      `error: traffic ${days[0]}: cannot write to stdout: disk full (ENOSPC); free some space and run again`,
    ]);
    const asked = new Set(metricRequestsSince(requests).map((request) => (request.query.datetime_gte ?? '').slice(0, 10)));
    for (const day of days.slice(2)) expect(asked.has(day), `${day} was fetched`).toBe(false);
  });

  it('--version and help, answered before the CLI loads: exit 7 and the same one line', async () => {
    for (const args of [['--version'], ['--help'], ['traffic', '--help']]) {
      const result = await runOntoFullDisk(args);
      expect(result.code, args.join(' ')).toBe(7);
      expect(failureLines(result)).toEqual(['error: cannot write to stdout: disk full (ENOSPC); free some space and run again']);
    }
  });

  it('--dry-run: exit 7 and one line instead of 0 with the requests lost', async () => {
    const result = await runOntoFullDisk(importArgs(sandbox, 'traffic', '-', '--from', daysAgo(6), '--to', daysAgo(2), '--dry-run'));
    expect(result.code).toBe(7);
    expect(failureLines(result)).toEqual(['error: cannot write to stdout: disk full (ENOSPC); free some space and run again']);
  });
});
