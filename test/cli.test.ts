import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../src/cli.js';
import type { CommandContext } from '../src/commands/context.js';
import { Reporter } from '../src/commands/reporter.js';
import { DESCRIPTORS } from '../src/metrics/descriptors.js';
import { captured } from './helpers/cli.js';

function context(env: NodeJS.ProcessEnv = {}): CommandContext & { out: () => string; err: () => string } {
  const stdout = captured();
  const stderr = captured();
  return { stdout, stderr, env, signal: new AbortController().signal, out: stdout.text, err: stderr.text };
}

describe('the command table', () => {
  const build = (args: readonly string[]) => buildProgram(context(), new Reporter(new PassThrough()), args);

  /** Each command as the top-level help lists it: name, arguments and summary. */
  async function listed(args: readonly string[]): Promise<Map<string, string>> {
    const program = build(args);
    const help = program.createHelp();
    return new Map(program.commands.map((command) => [command.name(), `${help.subcommandTerm(command)}: ${command.description()}`]));
  }

  it('declares no command in full for the top-level help', async () => {
    const program = build(['--help']);
    expect(program.commands.map((command) => command.name())).toEqual([
      'unique-users',
      'avg-screen-time',
      'traffic',
      'all',
      'status',
      'check',
      'accept',
      'reopen',
      'backtest',
      'token',
      'broker',
      'sandbox',
    ]);
    expect(program.commands.every((command) => command.options.length === 0)).toBe(true);
  });

  it('lists every command the same way whether it is declared in full or not; the one named has its options', async () => {
    const unloaded = await listed([]);
    for (const name of unloaded.keys()) {
      expect((await listed([name])).get(name), name).toBe(unloaded.get(name));
      expect(build([name]).commands.find((command) => command.name() === name)?.options.length, name).toBeGreaterThan(0);
    }
  });

  it('summarises every command in one style: lower case, no final period', async () => {
    for (const command of build([]).commands) {
      expect(command.description(), command.name()).toMatch(/^[a-z]/);
      expect(command.description(), command.name()).not.toMatch(/\.$/);
    }
  });

  it('lists the exit codes in the help of every command that runs to an end', async () => {
    for (const name of ['all', 'traffic', 'status', 'check', 'accept', 'token', 'broker']) {
      const run = context();
      expect(await runCli([name, '--help'], run), name).toBe(0);
      expect(run.out(), name).toMatch(/Exit codes: 0 /);
    }
  });

  it('names in the help of accept and reopen every metric its descriptors declare, and all', async () => {
    for (const name of ['accept', 'reopen']) {
      const run = context();
      expect(await runCli([name, '--help'], run), name).toBe(0);
      expect(run.out(), name).toContain(`<metric> is ${DESCRIPTORS.map((metric) => metric.name).join(', ')} or all.`);
    }
  });
});

describe('runCli', () => {
  it('reports a usage error as one line and exit 2, with the context left as it was', async () => {
    const run = context();
    const before = { ...run };
    expect(await runCli(['traffic', '--date', '2026-02-30'], run)).toBe(2);
    expect(run.err()).toMatch(/^\S+Z error: --date "2026-02-30"[^\n]*\n$/);
    expect({ ...run }).toEqual(before);
  });

  it('gives each run its own reporter: a JSON log format asked by one run does not carry over to the next', async () => {
    const shared = context();
    expect(await runCli(['traffic', '--log-format', 'json', '--date', 'nope'], shared)).toBe(2);
    expect(await runCli(['traffic', '--date', 'nope'], shared)).toBe(2);
    const [json, text] = shared.err().trimEnd().split('\n');
    expect(JSON.parse(json ?? '')).toMatchObject({ level: 'error', msg: expect.stringContaining('--date "nope"') as unknown });
    expect(text).toMatch(/^\S+Z error: --date "nope"/);
  });
});
