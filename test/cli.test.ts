import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli.js';
import type { CommandContext } from '../src/commands/context.js';

const context: CommandContext = {
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  env: {},
  signal: new AbortController().signal,
  reportError: () => {},
};

/** Each command as the top-level help lists it: name, arguments and summary. */
async function listed(args: readonly string[]): Promise<Map<string, string>> {
  const program = await buildProgram(context, args);
  const help = program.createHelp();
  return new Map(program.commands.map((command) => [command.name(), `${help.subcommandTerm(command)}: ${command.description()}`]));
}

describe('the lazy command table', () => {
  it('loads no command module for the top-level help', async () => {
    const program = await buildProgram(context, ['--help']);
    expect(program.commands.every((command) => command.options.length === 0)).toBe(true);
  });

  it('lists every command the same way whether its module is loaded or not', async () => {
    const unloaded = await listed([]);
    expect(unloaded.size).toBeGreaterThan(10);
    for (const name of unloaded.keys()) {
      const loaded = await listed([name]);
      expect(loaded.get(name), name).toBe(unloaded.get(name));
      expect((await buildProgram(context, [name])).commands.find((command) => command.name() === name)?.options.length, name).toBeGreaterThan(0);
    }
  });
});
