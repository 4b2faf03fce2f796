/**
 * A new user's first week, the command side: a suggested command works as printed, a secret given as a flag is warned
 * about once, and an output path the kernel will not create fails at once (and never holds off a SIGTERM). The
 * suggestion runs in-process; what only a process shows (its real stderr, a real signal) spawns the BUILT binary.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, startCli, waitUntil, type CliResult } from '../helpers/cli.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { clockedCli, clockEnv, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { SECRET_ENV, VENDOR_SECRET, useSandbox, importArgs } from '../helpers/vendor.js';
import { useTempDirs } from '../helpers/tmp.js';
import { UNIT_WITHOUT_FILE } from '../helpers/manifests.js';

const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK);
const tempDir = useTempDirs('first-week-');

const daysAgo = daysBefore(CLOCK);

beforeAll(() => {
  assertBuilt();
});

const sandbox = useSandbox({ ...servingDaysInProgress(CLOCK), port: 0, stores: 2, zones: 2, days: 10, clientId: 'week-client' });

/** A command line run in this process, with the clock and the secret in its environment. */
function inProcess(args: readonly string[]): Promise<CliResult> {
  return runInProcess(args, { env: { ...clockEnv(CLOCK), ...SECRET_ENV } });
}

describe('a suggested command', () => {
  it("the give-up warning names accept and reopen with the run's -o, and the accept works as printed", async () => {
    const out = `${await tempDir()}/my data`;
    const hidden = daysAgo(4);
    sandbox.setPublishing({ hidden: [{ day: hidden }] });
    const run = await inProcess(importArgs(sandbox, 'traffic', out, '--date', hidden, '--give-up-days', '1'));
    expect(run.code, run.stderr).toBe(0);
    const warning = run.stderr.split('\n').find((line) => line.includes('given up'));
    expect(warning).toBe(
      `warn: traffic ${hidden}: still not published 1 days after its window ended (--give-up-days 1): given up, --catch-up no longer asks for it; ` +
        `\`area-metrics accept traffic --date ${hidden} -o '${out}'\` records it as final, \`area-metrics reopen traffic --date ${hidden} -o '${out}'\` asks for it again`,
    );
    const printed = /`area-metrics (accept [^`]+)`/.exec(warning ?? '')?.[1] ?? '';
    // The words as a shell splits them: the quoted path is one word.
    const words = [...printed.matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');
    const accepted = await inProcess(words);
    expect(accepted.stderr).toBe('');
    expect(accepted).toMatchObject({ code: 0, stdout: `accepted traffic ${hidden} (1 day): final, --catch-up no longer asks for them\n` });
    // A loader that reads only manifests learns of it: the newest one says the day is final now, with no file.
    const newest = (await readdir(join(out, '_runs'))).sort().at(-1) ?? '';
    const manifest = JSON.parse(await readFile(join(out, '_runs', newest), 'utf8')) as { command: string; units: unknown[] };
    expect(manifest.command).toBe(`accept traffic ${hidden}`);
    expect(manifest.units).toEqual([
      {
        metric: 'traffic',
        day: hidden,
        ...UNIT_WITHOUT_FILE,
        status: 'final',
        finalized: true,
      },
    ]);
  });
});

describe('a secret given as a flag', () => {
  const args = (out: string): string[] => importArgs(sandbox, 'all', out, '--date', daysAgo(2));
  const warned = (stderr: string): string[] => stderr.split('\n').filter((line) => line.includes('every user of this machine'));

  it('is warned about once per run on the real stderr, however many metrics run', async () => {
    const result = await runCli([...args(await tempDir()), '--client-secret', VENDOR_SECRET]);
    expect(result.code, result.stderr).toBe(0);
    expect(warned(result.stderr)).toEqual([
      'warn: --client-secret puts the secret on the command line, where every user of this machine can read it (ps); ' +
        'name a file with AREA_METRICS_CLIENT_SECRET_FILE (or --client-secret-file), or set AREA_METRICS_CLIENT_SECRET',
    ]);
    expect(result.rawStderr).not.toContain(VENDOR_SECRET);
  });

  it('is not warned about when it comes from the environment', async () => {
    const result = await runCli(args(await tempDir()), { env: SECRET_ENV });
    expect(result.code, result.stderr).toBe(0);
    expect(warned(result.stderr)).toEqual([]);
  });
});

describe.runIf(process.platform === 'linux')('an output path the kernel will not create', () => {
  const args = (out: string): string[] => importArgs(sandbox, 'traffic', out, '--date', daysAgo(2));
  const env = SECRET_ENV;

  it("fails within seconds with exit 7 and one line naming it (Node's own mkdir would loop for ever)", async () => {
    const out = `/proc/area-metrics-${process.pid}/data`;
    const started = Date.now();
    const result = await runCli(args(out), { env, timeoutMs: 10_000 });
    expect(Date.now() - started).toBeLessThan(8_000); // within seconds: not a loop stopped by the 10 s timeout
    expect(result.code).toBe(7);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('error: '))).toEqual([
      `error: cannot create folder /proc/area-metrics-${process.pid}: the file system there takes no new folders (ENOENT); choose another path`,
    ]);
  });

  it('a folder under a file is exit 7 with one line, for the import and for status', async () => {
    const file = join(await tempDir(), 'a-file');
    await writeFile(file, 'not a folder');
    const result = await runCli(args(join(file, 'sub')), { env, timeoutMs: 10_000 });
    expect(result.code).toBe(7);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('error: '))).toEqual([
      `error: cannot read state file ${join(file, 'sub', '.area-metrics-state.json')}: a part of the path is a file, not a folder (ENOTDIR); move that file or choose another path`,
    ]);
    expect((await runCli(['status', '-o', join(file, 'sub')], { env })).code).toBe(7);
  });

  it('a SIGTERM once the run has started ends it at once, if it has not ended by itself', async () => {
    const cli = startCli(args(`/proc/area-metrics-${process.pid}/term`), { env: { ...clockEnv(CLOCK), ...env }, timeoutMs: 10_000 });
    let ended = false;
    void cli.done.then(
      () => (ended = true),
      () => (ended = true),
    );
    // Its first line is printed once its signal handlers are in place.
    await waitUntil(() => ended || cli.stderr().includes(' area-metrics '), 'the run line');
    const sent = Date.now();
    cli.kill('SIGTERM');
    const result = await cli.done;
    expect(Date.now() - sent).toBeLessThan(8_000); // at once: not a run the 10 s timeout had to stop
    // Exit 7 (it failed first), 143 (the signal stopped it) or, caught while the process was already ending, the
    // signal itself: never the old loop that a first SIGTERM does not stop.
    expect(result.code === 7 || result.code === 143 || result.signal === 'SIGTERM', `code ${result.code}, signal ${result.signal}`).toBe(
      true,
    );
  });
});
