import { describe, expect, it } from 'vitest';
import { FAULT_NAMES, SANDBOX_FAULTS } from '../../src/sandbox/fault-table.js';
import type { SandboxFaults } from '../../src/sandbox/index.js';
import { errorLines, firstLine, runCli, startInProcess, waitUntil } from '../helpers/cli.js';
import { useSandbox } from '../helpers/vendor.js';

/** Each fault as a flag gives it and as a body of the admin route says it: one row per fault of the table. */
const SAID_BOTH_WAYS: readonly { readonly flags: readonly string[]; readonly faults: SandboxFaults }[] = [
  { flags: ['--latency-ms', '5'], faults: { latencyMs: 5 } },
  { flags: ['--fail-nth', '2:503:2'], faults: { failNth: { n: 2, status: 503, times: 2 } } },
  { flags: ['--rate-limit-nth', '1:2'], faults: { rateLimitNth: { n: 1, retryAfterSeconds: 2 } } },
  { flags: ['--truncate-nth', '3'], faults: { truncateNth: { n: 3 } } },
  { flags: ['--foreign-next-origin', 'http://127.0.0.1:9'], faults: { foreignNextOrigin: 'http://127.0.0.1:9' } },
  { flags: ['--repeat-result'], faults: { repeatResult: true } },
  { flags: ['--token-latency-ms', '7'], faults: { tokenLatencyMs: 7 } },
  { flags: ['--rate-limit', '4/s', '--rate-limit-headers', 'x'], faults: { rateLimit: { perSecond: 4, headers: 'x' } } },
  { flags: ['--rate-limit', '4/s'], faults: { rateLimit: { perSecond: 4 } } },
  { flags: ['--token-fail-nth', '1:500'], faults: { tokenFailNth: { n: 1, status: 500 } } },
];

/** The faults the `sandbox` command started with, from its banner. */
async function faultsOfCommand(flags: readonly string[]): Promise<unknown> {
  const cli = startInProcess(['sandbox', '--port', '0', '--stores', '1', '--days', '1', ...flags]);
  await waitUntil(() => cli.stdout().includes('stop with'), 'the banner');
  cli.kill('SIGINT');
  expect((await cli.done).code).toBe(0);
  return JSON.parse(/^faults: +(.+)$/m.exec(cli.stdout())![1]!) as unknown;
}

const sandbox = useSandbox({ stores: 1, days: 1 });

describe('the fault table: one fault language for the flags, the help and the admin route', () => {
  it('has a row here for every fault of the table', () => {
    expect(new Set(SAID_BOTH_WAYS.flatMap(({ faults }) => Object.keys(faults)))).toEqual(new Set(FAULT_NAMES));
  });

  it.each(SAID_BOTH_WAYS)('$flags: the flag and the admin body give the same faults', async ({ flags, faults }) => {
    expect(await faultsOfCommand(flags)).toEqual(faults);
    const posted = await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'POST', body: JSON.stringify(faults) });
    expect(await posted.json()).toEqual({ faults });
  });

  it('gives several faults at once, in the order the admin route shows them', async () => {
    // The first row of each fault.
    const rows = SAID_BOTH_WAYS.filter((row, index) => SAID_BOTH_WAYS.findIndex((other) => other.flags[0] === row.flags[0]) === index);
    const all = Object.assign({}, ...rows.map(({ faults }) => faults)) as SandboxFaults;
    const shown = await faultsOfCommand(rows.flatMap(({ flags }) => flags));
    sandbox.setFaults(all);
    expect(JSON.stringify(shown)).toBe(JSON.stringify(sandbox.faults()));
  });

  it.each([
    [['--fail-nth', '3'], '--fail-nth expects N:STATUS[:TIMES], e.g. 2:503 (got "3")'],
    [['--fail-nth', '3:99'], 'invalid sandbox faults in options: failNth.status: Too small: expected number to be >=400'],
    [['--rate-limit-nth', 'a:b'], '--rate-limit-nth expects N:SECONDS[:TIMES], e.g. 1:2 (got "a:b")'],
    [['--truncate-nth', '1:2:3'], '--truncate-nth expects N[:TIMES], e.g. 2 (got "1:2:3")'],
    [['--foreign-next-origin', 'notaurl'], 'invalid sandbox faults in options: foreignNextOrigin: an http(s) origin'],
    [['--rate-limit', '10'], '--rate-limit expects N/s, e.g. 10/s (got "10")'],
    [['--rate-limit', '0/s'], '--rate-limit "0" must be a whole number from 1 to 100000'],
    [['--rate-limit', '10/min'], '--rate-limit expects N/s, e.g. 10/s (got "10/min")'],
    [['--rate-limit-headers', 'draft'], '--rate-limit-headers needs --rate-limit N/s'],
    [['--latency-ms', '700000'], '--latency-ms "700000" must be a whole number from 0 to 600000'],
    [['--token-fail-nth', '0:500'], 'invalid sandbox faults in options: tokenFailNth.n: Too small: expected number to be >=1'],
  ])('%j: exit 2, "%s"', async (flags, message) => {
    const { code, stderr } = await runCli(['sandbox', '--port', '0', ...flags]);
    expect(code).toBe(2);
    expect(errorLines(stderr)).toEqual([message]);
  });

  it("--help lists every fault's flag and the admin body's switches, the publishing body's distorted rules and the clock", async () => {
    const { code, stdout } = await runCli(['sandbox', '--help']);
    expect(code).toBe(0);
    const flat = stdout.replace(/\s+/g, ' ');
    for (const [name, row] of Object.entries(SANDBOX_FAULTS)) {
      expect(stdout).toContain(`${row.flag} `);
      expect(flat).toContain(row.value.kind === 'fields' ? `${name} {${Object.keys(row.value.fields).join(', ')}}` : name);
    }
    expect(stdout).toContain('--rate-limit-headers <kind>');
    expect(stdout).toContain('"distorted": [{"day": "2026-11-20", "metrics": ["traffic"], "factor": 0.5}]');
    expect(stdout).toMatch(/^ {2}AREA_METRICS_NOW=\S+ area-metrics sandbox --port 0 /m);
  });

  it("--help's clock example sets the sandbox's clock, as the import commands read it", async () => {
    const { stdout: help } = await runCli(['sandbox', '--help']);
    const [, now, args] = /^ {2}AREA_METRICS_NOW=(\S+) area-metrics (sandbox --port 0)/m.exec(help)!;
    const cli = startInProcess([...args!.split(' '), '--stores', '1'], { env: { AREA_METRICS_NOW: now! } });
    await firstLine(cli);
    await waitUntil(() => cli.stdout().includes('stop with'), 'the banner');
    cli.kill('SIGINT');
    await cli.done;
    // 14 days ending the day before the clock's.
    expect(cli.stdout()).toContain('UTC days 2026-11-08..2026-11-21');
  });
});
