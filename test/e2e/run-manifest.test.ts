/**
 * Run manifests (`<output>/_runs/seq-<number>.json`): the BUILT binary against the sandbox, a first run, an unchanged
 * re-run and a run after the vendor corrects one day, read as a loader reads them; a run with a failed unit.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT, type CliResult } from '../helpers/cli.js';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { listFiles, useTempDirs } from '../helpers/tmp.js';
import { UNIT_WITHOUT_FILE } from '../helpers/manifests.js';
import { useSandbox, VENDOR_SECRET } from '../helpers/vendor.js';

const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK);
const tempDir = useTempDirs('run-manifest-e2e-');
const daysAgo = daysBefore(CLOCK);
const DAYS = [daysAgo(4), daysAgo(3), daysAgo(2)];
const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };

beforeAll(assertBuilt);
const sandbox = useSandbox({
  port: 0,
  stores: 3,
  zones: 2,
  days: 8,
  seed: 9,
  clientId: 'manifest-client',
  ...servingDaysInProgress(CLOCK),
});

interface ManifestUnit {
  metric: string;
  day: string;
  store: string | null;
  path: string | null;
  rows: number | null;
  bytes: number | null;
  sha256: string | null;
  changed: boolean;
  error?: { exitCode: number | null; message: string };
}
interface Manifest {
  manifestVersion: number;
  runId: string;
  tool: string;
  version: string;
  command: string;
  start: string;
  end: string;
  exitCode: number;
  requests: number | null;
  throttled: number | null;
  layout: string;
  format: string;
  days: string;
  units: ManifestUnit[];
}

// The secret as a flag: the manifest keeps the command line, and must keep it without the secret.
async function run(args: readonly string[]): Promise<CliResult> {
  return runCli([...args, '--base-url', sandbox().url, '--client-id', sandbox().clientId, '--client-secret', VENDOR_SECRET], {
    timeoutMs: 60_000,
  });
}

/** The manifests of an output, oldest first, as a loader lists them (by name). */
async function manifests(out: string): Promise<Manifest[]> {
  const names = await listFiles(join(out, '_runs'));
  return Promise.all(names.map(async (name) => JSON.parse(await readFile(join(out, '_runs', name), 'utf8')) as Manifest));
}

/** What the manifest must say of a file: its size, its SHA-256 and its data rows, from the file itself. */
async function fileFacts(out: string, path: string): Promise<{ bytes: number; sha256: string; rows: number }> {
  const bytes = await readFile(join(out, path));
  return {
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    rows: bytes.toString('utf8').split('\n').filter(Boolean).length - 1,
  };
}

describe('run manifests', () => {
  it("a first run, an unchanged re-run and a run after the vendor corrects one day: only that file changed, checksums the files'", async () => {
    const out = await tempDir();
    const args = ['unique-users', '--from', DAYS[0]!, '--to', DAYS[2]!, '-o', out];
    expect((await run(args)).code).toBe(0);
    const [first] = await manifests(out);
    expect(await listFiles(join(out, '_runs'))).toEqual(['seq-000000000001.json']);
    expect(first).toMatchObject({
      manifestVersion: 1,
      tool: 'area-metrics',
      version,
      command: `unique-users --from ${DAYS[0]} --to ${DAYS[2]}`,
      exitCode: 0,
      layout: 'flat',
      format: 'csv',
      days: 'utc',
    });
    expect(Date.parse(first!.start)).toBeLessThanOrEqual(Date.parse(first!.end));
    // One request per unit (one page each), none answered 429.
    expect([first!.requests, first!.throttled]).toEqual([3, 0]);
    expect(first!.units.map(({ day, path, changed }) => [day, path, changed])).toEqual(
      DAYS.map((day) => [day, `unique-users/${day}.csv`, true]),
    );
    for (const unit of first!.units) {
      expect(unit).toMatchObject({ metric: 'unique-users', store: null, ...(await fileFacts(out, unit.path!)) });
      expect(unit.rows).toBeGreaterThan(0);
    }

    expect((await run(args)).code).toBe(0);
    const second = (await manifests(out))[1]!;
    expect(second.runId > first!.runId).toBe(true);
    expect(second.units.map(({ changed }) => changed)).toEqual([false, false, false]);
    expect(second.units.map(({ sha256 }) => sha256)).toEqual(first!.units.map(({ sha256 }) => sha256));

    sandbox().setPublishing({ corrected: [{ day: DAYS[1]!, revision: 1 }] });
    expect((await run(args)).code).toBe(0);
    const all = await manifests(out);
    expect(all).toHaveLength(3);
    const third = all[2]!;
    expect(third.units.map(({ day, changed }) => [day, changed])).toEqual([
      [DAYS[0], false],
      [DAYS[1], true],
      [DAYS[2], false],
    ]);
    for (const unit of third.units) expect(unit).toMatchObject(await fileFacts(out, unit.path!));
    expect(third.units[1]!.sha256).not.toBe(first!.units[1]!.sha256);
    // What a loader does: the paths that changed in the manifests it has not read yet.
    const changedSinceFirst = all.slice(1).flatMap((manifest) => manifest.units.filter((unit) => unit.changed).map((unit) => unit.path));
    expect(changedSinceFirst).toEqual([`unique-users/${DAYS[1]}.csv`]);
  });

  it('a run whose credentials are rejected mid-way: the failed unit says why, the next one that it was not attempted', async () => {
    const out = await tempDir();
    sandbox().setFaults({ failNth: { n: 2, status: 401 } });
    const result = await run(['traffic', '--from', DAYS[0]!, '--to', DAYS[2]!, '-o', out, '--concurrency', '1', '--layout', 'hive']);
    expect(result.code, result.stderr).toBe(3);
    const [manifest] = await manifests(out);
    expect(manifest).toMatchObject({ exitCode: 3, layout: 'hive' });
    expect(manifest!.units[0]).toMatchObject({ day: DAYS[0], path: `metric=traffic/dt=${DAYS[0]}/traffic_${DAYS[0]}.csv`, changed: true });
    expect(manifest!.units[1]).toMatchObject({
      day: DAYS[1],
      status: 'failed',
      path: null,
      rows: null,
      changed: false,
      error: { exitCode: 3, message: expect.stringMatching(/401/) },
    });
    expect(manifest!.units[2]).toEqual({
      metric: 'traffic',
      day: DAYS[2],
      ...UNIT_WITHOUT_FILE,
      status: 'failed',
      error: { exitCode: null, message: 'not attempted: the credentials were rejected' },
    });
    expect(JSON.stringify(manifest)).not.toContain(VENDOR_SECRET);
  });

  it('a run that writes to stdout leaves no manifest, a dry run none either', async () => {
    const cwd = await tempDir();
    const streamed = await runCli(
      [
        'traffic',
        '--date',
        DAYS[2]!,
        '-o',
        '-',
        '--base-url',
        sandbox().url,
        '--client-id',
        sandbox().clientId,
        '--client-secret',
        VENDOR_SECRET,
      ],
      { cwd, process: true },
    );
    expect(streamed.code, streamed.stderr).toBe(0);
    const dry = await run(['traffic', '--date', DAYS[2]!, '-o', join(cwd, 'out'), '--dry-run']);
    expect(dry.code).toBe(0);
    expect(await listFiles(cwd)).toEqual([]);
  });
});
