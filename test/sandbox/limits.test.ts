import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli.js';
import { errorLines } from '../helpers/cli.js';
import { InterruptedError } from '../../src/errors.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { checkInteger, SANDBOX_LIMITS } from '../../src/sandbox/limits.js';

function sink(): Writable & { text: () => string } {
  let text = '';
  const stream = new Writable({ write: (chunk: Buffer, _encoding, callback) => ((text += chunk.toString()), callback()) });
  return Object.assign(stream, { text: () => text });
}

/** Exit code and error lines of `area-metrics sandbox ...args`, stopped at once if it starts. */
async function sandboxCommand(args: string[]): Promise<{ code: number; errors: string[] }> {
  const controller = new AbortController();
  controller.abort(new InterruptedError('SIGINT'));
  const stderr = sink();
  const code = await runCli(['sandbox', '--port', '0', ...args], {
    stdout: sink(),
    stderr,
    env: {},
    signal: controller.signal,
  });
  return { code, errors: errorLines(stderr.text()) };
}

describe('the sandbox limits table', () => {
  it('checkInteger accepts the bounds and refuses what lies outside, naming the setting', () => {
    expect(checkInteger(1, SANDBOX_LIMITS.zones)).toBe(1);
    expect(checkInteger(1000, SANDBOX_LIMITS.zones)).toBe(1000);
    expect(() => checkInteger(1001, SANDBOX_LIMITS.zones)).toThrow('sandbox zones must be an integer in 1..1000 (got 1001)');
    expect(() => checkInteger(1.5, SANDBOX_LIMITS.zones)).toThrow(/zones/);
  });

  it.each([
    ['--stores', 'stores'],
    ['--zones', 'zones'],
    ['--days', 'days'],
    ['--token-ttl', 'tokenTtlSeconds'],
    ['--latency-ms', 'latencyMs'],
    ['--publish-after', 'publishAfterSeconds'],
  ] as const)('%s takes its range from the table the library checks', async (flag, key) => {
    const limit = SANDBOX_LIMITS[key];
    const outside = await sandboxCommand([flag, String(limit.max + 1)]);
    expect(outside.code).toBe(2);
    expect(outside.errors).toEqual([
      expect.stringContaining(`${flag} "${limit.max + 1}" must be a whole number from ${limit.min} to ${limit.max}`),
    ]);
    expect((await sandboxCommand([flag, String(limit.max)])).code).toBe(0);
  });

  it('startSandbox refuses the same values', async () => {
    await expect(startSandbox({ stores: SANDBOX_LIMITS.stores.max + 1 })).rejects.toThrow(/stores must be an integer/);
    await expect(startSandbox({ faults: { latencyMs: SANDBOX_LIMITS.latencyMs.max + 1 } })).rejects.toThrow(/latencyMs/);
  });
});
