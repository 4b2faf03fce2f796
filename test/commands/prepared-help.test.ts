import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/command-list.js';
import { answerHelp, helpCommandLines, prepareHelp, preparedText, type HelpRun } from '../../src/commands/prepared-help.js';
import { runCli as runCommandLine } from '../../src/cli.js';
import { captured, commandContext, runCli } from '../helpers/cli.js';

const NAMES = COMMANDS.map((command) => command.name);

/** The table as the build makes it: every help command line through the CLI, in this process. */
const prepared = prepareHelp(NAMES, async (args): Promise<HelpRun> => {
  const { code, stdout, stderr } = await runCli(args);
  return { code: code ?? -1, stdout, stderr };
});

describe('prepared help', () => {
  it('holds every help command line commander answers, each text once', async () => {
    const help = await prepared;
    expect(Object.keys(help.lines).sort()).toEqual(
      helpCommandLines(NAMES)
        .map((args) => args.join(' '))
        .sort(),
    );
    // The program's help and one per command; `-h`, `--help` and `help X` print the same text.
    expect(help.texts).toHaveLength(NAMES.length + 1);
    expect(preparedText(help, ['-h'])).toBe(preparedText(help, ['help']));
    for (const name of NAMES) {
      const text = preparedText(help, [name, '--help']);
      expect(text).toContain(`Usage: area-metrics ${name} `);
      expect(preparedText(help, ['help', name])).toBe(text);
    }
  });

  it('answers nothing else: other command lines, options, words that are not commands', async () => {
    const help = await prepared;
    for (const args of [
      [],
      ['traffic'],
      ['traffic', '--help', '--date'],
      ['nope', '--help'],
      ['__proto__'],
      ['help', 'constructor'],
      ['--version'],
    ]) {
      expect(preparedText(help, args), args.join(' ')).toBeUndefined();
    }
  });

  it('keeps only a clean answer: exit 0, something on stdout, nothing on stderr', async () => {
    const runs: Record<string, HelpRun> = {
      '--help': { code: 0, stdout: 'usage\n', stderr: '' },
      '-h': { code: 0, stdout: 'usage\n', stderr: '' },
      help: { code: 2, stdout: '', stderr: 'error: no\n' },
      'a --help': { code: 0, stdout: 'a usage\n', stderr: 'warning\n' },
      'a -h': { code: 0, stdout: '', stderr: '' },
      'help a': { code: 0, stdout: 'a usage\n', stderr: '' },
    };
    const help = await prepareHelp(['a'], async (args) => runs[args.join(' ')] as HelpRun);
    expect(help).toEqual({ texts: ['usage\n', 'a usage\n'], lines: { '--help': 0, '-h': 0, 'help a': 1 } });
  });

  it('answers a terminal of 80 columns or more with the same text; leaves a narrower one to commander', async () => {
    const help = await prepared;
    const wide = Object.assign(captured(), { isTTY: true, columns: 200 });
    expect(answerHelp(['traffic', '--help'], wide, () => help)).toBe(true);
    expect(wide.text()).toBe(preparedText(help, ['traffic', '--help']));
    for (const columns of [undefined, 79]) {
      const narrow = Object.assign(captured(), { isTTY: true, columns });
      expect(
        answerHelp(['traffic', '--help'], narrow, () => help),
        String(columns),
      ).toBe(false);
      expect(narrow.text()).toBe('');
    }
  });

  it('is what commander prints in any terminal of 80 columns or more; a narrower one gets its own width', async () => {
    const inTerminal = async (args: string[], columns: number): Promise<string> => {
      const stdout = Object.assign(captured(), { isTTY: true, columns });
      const context = commandContext({ stdout, stderr: captured(), env: {}, signal: new AbortController().signal });
      expect(await runCommandLine(args, context)).toBe(0);
      return stdout.text();
    };
    const help = await prepared;
    for (const args of [['--help'], ['traffic', '--help']]) {
      expect(await inTerminal(args, 200), args.join(' ')).toBe(preparedText(help, args));
      expect(await inTerminal(args, 80), args.join(' ')).toBe(preparedText(help, args));
    }
    // Commander wraps a description where the option names leave it room: the program's list does at 50.
    expect(await inTerminal(['--help'], 50)).not.toBe(preparedText(help, ['--help']));
  });
});
