import { readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';

/**
 * `--help` answered without commander and the option tables (about 50 modules, most of a start-up's cost): the build
 * runs every help command line through the CLI itself and keeps what it printed, and the binary prints that text when
 * the same command line comes again. The texts are derived from the one table of each command, at each build. Help
 * is 80 columns wide everywhere but in a narrower terminal, which commander answers at its width.
 * This module loads nothing but `node:fs`.
 */

/** The texts, each once, and for each help command line (its words joined by a space) the index of its text. */
export interface PreparedHelp {
  readonly texts: readonly string[];
  readonly lines: Readonly<Record<string, number>>;
}

/** Help's width: lines of at most 80 columns, in a pipe and in a terminal as wide or wider; the texts are made at it. */
export const HELP_WIDTH = 80;

/** A help command line has one of these words (other command lines do not read the table). */
const HELP_WORDS = new Set(['--help', '-h', 'help']);

/** Where the build writes the table: beside the built modules, read by the binary at start. */
export const PREPARED_HELP_URL = new URL('../help.json', import.meta.url);

/** Every command line commander answers with help: `--help`, `-h` and `help`, alone or for each command. */
export function helpCommandLines(commandNames: readonly string[]): string[][] {
  return [
    ['--help'],
    ['-h'],
    ['help'],
    ...commandNames.flatMap((name) => [
      [name, '--help'],
      [name, '-h'],
      ['help', name],
    ]),
  ];
}

/** What the CLI printed for one command line. */
export interface HelpRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs each help command line through the CLI; only a clean answer (exit 0, nothing on stderr) is kept. */
export async function prepareHelp(
  commandNames: readonly string[],
  run: (args: readonly string[]) => Promise<HelpRun>,
): Promise<PreparedHelp> {
  const texts: string[] = [];
  const lines: Record<string, number> = {};
  for (const args of helpCommandLines(commandNames)) {
    const { code, stdout, stderr } = await run(args);
    if (code !== 0 || stderr !== '' || stdout === '') continue;
    const known = texts.indexOf(stdout);
    lines[args.join(' ')] = known >= 0 ? known : texts.push(stdout) - 1;
  }
  return { texts, lines };
}

/** The prepared text for a command line, or undefined when commander must answer it. */
export function preparedText(help: PreparedHelp, args: readonly string[]): string | undefined {
  if (args.length === 0 || args.length > 2) return undefined;
  const index = Object.hasOwn(help.lines, args.join(' ')) ? help.lines[args.join(' ')] : undefined;
  return index === undefined ? undefined : help.texts[index];
}

/** The table the build wrote, or undefined when there is none (a build without it: commander answers). */
function readPreparedHelp(): PreparedHelp | undefined {
  try {
    return JSON.parse(readFileSync(PREPARED_HELP_URL, 'utf8')) as PreparedHelp;
  } catch {
    return undefined;
  }
}

/**
 * Prints the prepared help for a command line and returns true, or returns false (nothing printed) when commander
 * must answer: a terminal narrower than the texts, another command line, or no table.
 */
export function answerHelp(
  args: readonly string[],
  stdout: Writable & { isTTY?: boolean; columns?: number },
  table: () => PreparedHelp | undefined = readPreparedHelp,
): boolean {
  const narrowTerminal = stdout.isTTY === true && (stdout.columns ?? 0) < HELP_WIDTH;
  if (narrowTerminal || args.length === 0 || args.length > 2 || !args.some((arg) => HELP_WORDS.has(arg))) return false;
  const help = table();
  const text = help === undefined ? undefined : preparedText(help, args);
  if (text === undefined) return false;
  stdout.write(text);
  return true;
}
