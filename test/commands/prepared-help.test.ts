import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/command-list.js';
import { answerHelp, helpCommandLines, prepareHelp, preparedText, type HelpRun } from '../../src/commands/prepared-help.js';
import { captured, runCli } from '../helpers/cli.js';

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

  it('leaves a terminal to commander, which wraps help to its width', () => {
    const terminal = Object.assign(captured(), { isTTY: true });
    expect(answerHelp(['--help'], terminal)).toBe(false);
    expect(terminal.text()).toBe('');
  });
});
