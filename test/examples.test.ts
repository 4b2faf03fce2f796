import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../src/cli.js';
import { Reporter } from '../src/commands/reporter.js';
import type { CommandContext } from '../src/commands/context.js';
import { InterruptedError } from '../src/errors.js';
import { ROOT, waitUntil } from './helpers/cli.js';
import { codeBlocks } from './helpers/markdown.js';

/**
 * A secret given as a flag is in the process list for every user of the machine, so nothing we show a user may teach
 * it: not the README, not docs/, not a command's --help examples, not the sandbox's banner. Each `--client-secret
 * <value>` or `--attestation-token <value>` found is returned as written (a placeholder value counts: it teaches the
 * flag all the same).
 */
function secretFlags(text: string): string[] {
  return [...text.matchAll(/--(?:client-secret|attestation-token)(?:=|[ \t]+(?!-))\S+/g)].map((match) => match[0]);
}

class Collector extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

function collectingContext(): { context: CommandContext; stdout: Collector; controller: AbortController } {
  const stdout = new Collector();
  const controller = new AbortController();
  const context: CommandContext = { stdout, stderr: new Collector(), env: {}, signal: controller.signal };
  return { context, stdout, controller };
}

const markdownFiles = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((path) =>
  path.endsWith('.md'),
);

describe('no example passes a secret as a flag', () => {
  it.each(markdownFiles)('%s: no code block', (path) => {
    const blocks = codeBlocks(readFileSync(join(ROOT, path), 'utf8'));
    expect(blocks.flatMap(secretFlags)).toEqual([]);
  });

  it("no command's --help examples", async () => {
    const names = buildProgram(collectingContext().context, new Reporter(new Collector()), [])
      .commands.map((command) => command.name())
      .filter((name) => name !== 'help');
    expect(names).toEqual(expect.arrayContaining(['all', 'check', 'token', 'broker', 'sandbox']));
    for (const name of names) {
      const { context, stdout } = collectingContext();
      expect(await runCli([name, '--help'], context), name).toBe(0);
      // The options list names each flag with its placeholder; the examples are what a user copies.
      const examples = stdout.text.split('Examples:')[1] ?? '';
      expect(secretFlags(examples), name).toEqual([]);
    }
  });

  it.each([
    ['the demo secret', []],
    ['a secret the operator chose', ['--client-secret', 'operator-chosen-secret']],
  ])("the sandbox's banner, with %s", async (_label, secretArgs) => {
    const { context, stdout, controller } = collectingContext();
    const running = runCli(['sandbox', '--port', '0', '--stores', '1', '--days', '1', ...secretArgs], context);
    await waitUntil(() => stdout.text.includes('stop with'), 'the banner');
    controller.abort(new InterruptedError('SIGINT'));
    expect(await running).toBe(0);
    expect(stdout.text).toMatch(/^try: +AREA_METRICS_CLIENT_SECRET(_FILE)?=\S+ area-metrics all /m);
    expect(secretFlags(stdout.text)).toEqual([]);
  });
});

describe('the README', () => {
  it('stays a front page: at most 250 lines, the reference in docs/', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });
});
