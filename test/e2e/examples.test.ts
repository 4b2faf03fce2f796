import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { assertBuilt, BIN, cliEnv, ROOT, runCli, withoutTimestamps } from '../helpers/cli.js';
import { commandBlocks, type CommandBlock } from '../helpers/markdown.js';
import { clockEnv, noonToday } from '../helpers/sandbox-clock.js';

/**
 * Every shell block of the README and docs/, run as written against a sandbox as the README starts it (its defaults:
 * 14 days ending yesterday), in the block's stated exit (`sh exit=N`, default 0). What is substituted is only what
 * must be: the vendor's URLs become the sandbox's, the absolute folders the examples name (/etc/area-metrics,
 * /data) a temp folder's, and each file's blocks run in order in a temp folder of their own; the credentials come
 * from the README's env file (the block marked `file=/etc/area-metrics/env`), as a user's shell would have them.
 * A block that cannot run here says why in its info string (`sh not-run="..."`).
 */

const CLIENT_ID = 'acme-retail';
const SECRET = 'examples-Secret-6d1f';
const MARKDOWN = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
].filter((path) => commandBlocks(readFileSync(join(ROOT, path), 'utf8')).length > 0);
const ENV_FILE = '/etc/area-metrics/env';
/**
 * Noon (UTC) of today for the sandbox and every command, the calendar day `date -u` gives the blocks: from midnight
 * to 01:00 UTC the day before yesterday is not over yet, and `status --max-behind 1` would rightly say 2 days behind.
 */
const CLOCK = noonToday();

let sandbox: Sandbox;
/** Where the examples' absolute folders are, the stand-in commands, and the env file's variables. */
let world: { root: string; bin: string; env: Record<string, string> };
/** The environment of the blocks being run: the README's come with its env file's variables, docs/ say their own. */
let blockEnv: Record<string, string> = {};

/** The block's text with the vendor's URLs and the absolute folders made the test's. */
function placed(text: string): string {
  return text
    .replaceAll('https://analytics.vendor.example', sandbox.url)
    .replaceAll('https://auth.vendor.example', sandbox.url)
    .replaceAll('/etc/area-metrics/', `${world.root}/etc/area-metrics/`)
    .replaceAll('/data/', `${world.root}/data/`)
    .replaceAll('/var/lib/node_exporter/', `${world.root}/var/lib/node_exporter/`);
}

/** `NAME=value` lines, as `set -a && . file` reads them (no quoting in the examples' files). */
function envFile(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .map((line) => /^([A-Z_][A-Z0-9_]*)=(\S*)$/.exec(line.trim()))
      .flatMap((match) => (match ? [[match[1]!, match[2]!]] : [])),
  );
}

/** The UTC day `n` days before now, as GNU `date -u -d 'n days ago' +%F` prints it. */
function daysAgo(n: number): string {
  return new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
}

/** The logical lines of a block: continuations joined, comment lines and trailing comments dropped. */
function logicalLines(body: string): string[] {
  return body
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#(?![^']*'[^']*$).*$/, '').trim())
    .filter((line) => line !== '');
}

const WORD = /'([^']*)'|"([^"$`\\]*)"|\$\(date -u -d '(\d+) days ago' \+%F\)|([^\s'"|&;<>()$`*?\\]+)/y;

/** A line's words when it is one plain `area-metrics ...` command a shell would pass as they are; else undefined. */
function plainCommand(line: string): string[] | undefined {
  const words: string[] = [];
  WORD.lastIndex = 0;
  let rest = line;
  while (rest !== '') {
    WORD.lastIndex = 0;
    const match = WORD.exec(rest);
    if (match === null) return undefined;
    words.push(match[1] ?? match[2] ?? (match[3] === undefined ? match[4]! : daysAgo(Number(match[3]))));
    rest = rest.slice(match[0].length);
    if (rest !== '' && !/^\s/.test(rest)) return undefined;
    rest = rest.trimStart();
  }
  return words[0] === 'area-metrics' ? words.slice(1) : undefined;
}

/** The `set -a && . <file> && ` a line starts with, taken off (its file is the env file every block has). */
function withoutEnvPrefix(line: string): string {
  return line.replace(new RegExp(`^set -a && \\. ${world.root}/etc/area-metrics/env && `), '');
}

interface BlockRun {
  readonly code: number | null;
  readonly stderr: string;
}

/** A block of plain commands, each run in this process (no shell needed), in `cwd`; the first failure ends it. */
async function runInProcess(commands: string[][], cwd: string): Promise<BlockRun> {
  const before = process.cwd();
  process.chdir(cwd);
  try {
    let stderr = '';
    for (const args of commands) {
      const result = await runCli(args, { env: { ...clockEnv(CLOCK), ...blockEnv } });
      stderr += result.stderr;
      if (result.code !== 0) return { code: result.code, stderr };
    }
    return { code: 0, stderr };
  } finally {
    process.chdir(before);
  }
}

/** A block that needs a shell (pipes, variables, redirections): bash -e, the built binary and stand-ins first on PATH. */
function runInShell(body: string, cwd: string): Promise<BlockRun> {
  assertBuilt();
  const env = cliEnv({ ...clockEnv(CLOCK), ...blockEnv, PATH: `${world.bin}${delimiter}${process.env.PATH ?? ''}` });
  // A group of its own: what the block started in the background (a sandbox) ends with it, whatever failed.
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', body], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const endGroup = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      endGroup();
      reject(new Error(`the block did not finish within 20 s; stderr so far:\n${stderr}`));
    }, 20_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      endGroup();
      resolve({ code, stderr: withoutTimestamps(stderr) });
    });
  });
}

/** Runs a block as written (in this process when every line is a plain command) and returns its exit and stderr. */
function runBlock(block: CommandBlock, cwd: string): Promise<BlockRun> {
  const body = placed(block.body);
  const commands = logicalLines(body).map((line) => plainCommand(withoutEnvPrefix(line)));
  if (commands.every((command) => command !== undefined)) return runInProcess(commands, cwd);
  return runInShell(body, cwd);
}

beforeAll(async () => {
  sandbox = await startSandbox({ clientId: CLIENT_ID, clientSecret: SECRET, now: () => CLOCK });
  // One folder for the whole file: a file's blocks build on each other (the backfill, then the query over it).
  const root = mkdtempSync(join(tmpdir(), 'examples-'));
  const bin = join(root, 'bin');
  mkdirSync(join(root, 'etc/area-metrics'), { recursive: true });
  mkdirSync(join(root, 'data'), { recursive: true });
  mkdirSync(join(root, 'var/lib/node_exporter'), { recursive: true });
  mkdirSync(bin);
  writeFileSync(join(root, 'etc/area-metrics/secret'), `${SECRET}\n`, { mode: 0o600 });
  // What `npm install -g` puts on PATH, and DuckDB's CLI where it is not installed (its Node client instead).
  writeFileSync(join(bin, 'area-metrics'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  if (!onPath('duckdb'))
    writeFileSync(join(bin, 'duckdb'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'test/helpers/duckdb-cli.mjs')}" "$@"\n`);
  for (const name of readdirSync(bin)) chmodSync(join(bin, name), 0o755);
  world = { root, bin, env: {} };
  const readme = commandBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8')).find((block) => block.file === ENV_FILE);
  if (readme === undefined) throw new Error(`the README shows no ${ENV_FILE} (a block marked file=${ENV_FILE})`);
  world.env = envFile(placed(readme.body));
});

afterAll(async () => {
  await sandbox.close();
  rmSync(world.root, { recursive: true, force: true });
});

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((folder) => folder !== '' && existsSync(join(folder, command)));
}

describe.each(MARKDOWN)('%s', (path) => {
  const blocks = commandBlocks(readFileSync(join(ROOT, path), 'utf8'));
  let cwd: string;
  beforeAll(() => {
    cwd = join(world.root, 'cwd', path.replaceAll('/', '_'));
    mkdirSync(cwd, { recursive: true });
    blockEnv = path === 'README.md' ? world.env : {};
  });

  for (const block of blocks) {
    const title = `line ${block.line}: ${block.body.split('\n')[0]!.slice(0, 90)}`;
    if (block.notRun !== undefined) {
      it.skip(`${title} (not run: ${block.notRun})`, () => {});
      continue;
    }
    it(title, async () => {
      if (block.file !== undefined) {
        const file = placed(block.file);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, placed(block.body));
        return;
      }
      const run = await runBlock(block, cwd);
      expect(run.code, run.stderr).toBe(block.exit);
      // A failure a shell hides (`export X=$(...)` exits 0 whatever the command did) still prints its error line.
      if (block.exit === 0) expect(run.stderr.split('\n').filter((line) => line.startsWith('error: '))).toEqual([]);
    });
  }
});

/**
 * The `--help` examples that cannot run here, by what they name: the rest run, after the README's blocks, with the
 * README's env file (the status examples read the folder its cron backfill wrote).
 */
const HELP_NOT_RUN: readonly (readonly [RegExp, string])[] = [
  [/s3:\/\//, 'needs an S3 bucket (test/e2e/object-storage.test.ts runs the same against s3rver)'],
  [/postgresql:\/\//, 'needs a PostgreSQL server (test/e2e/postgres.test.ts)'],
  [/--broker|area-metrics broker|gatekeeper-token/, "a broker holds real platforms' credentials and serves until stopped"],
  [/area-metrics sandbox|_sandbox|:8080/, 'starts a sandbox that serves until stopped, on port 8080'],
];

/** A command's help examples as command lines: `$ ` taken off, continuations joined, comment lines dropped. */
function helpExamples(help: string): string[] {
  const section = help.split('\nExamples:\n')[1]?.split(/\n\s*\n/)[0] ?? '';
  return section
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim().replace(/^\$ /, ''))
    .filter((line) => line !== '' && !line.startsWith('#'));
}

async function helpOf(command: string): Promise<string> {
  const result = await runCli([command, '--help']);
  expect(result.code).toBe(0);
  return result.stdout;
}

describe("every command's --help examples", () => {
  // The three metrics' help is the import's, with the metric's name: all's examples run, theirs must be the same.
  const COMMANDS = ['all', 'check', 'token', 'status', 'accept', 'broker', 'sandbox'];
  let cwd: string;
  beforeAll(() => {
    cwd = join(world.root, 'cwd', 'help');
    mkdirSync(cwd, { recursive: true });
    blockEnv = world.env;
  });

  it.each(['unique-users', 'avg-screen-time', 'traffic'])("%s's are all's, with its name", async (metric) => {
    expect(helpExamples(await helpOf(metric))).toEqual(
      helpExamples(await helpOf('all')).map((line) => line.replaceAll('area-metrics all ', `area-metrics ${metric} `)),
    );
  });

  it.each(COMMANDS)('%s', async (command) => {
    const lines = helpExamples(await helpOf(command));
    expect(lines.length, command).toBeGreaterThan(0);
    for (const line of lines) {
      if (HELP_NOT_RUN.some(([pattern]) => pattern.test(line))) continue;
      const run = await runBlock({ line: 0, language: 'sh', body: line, exit: 0 }, cwd);
      expect(run.code, `${line}\n${run.stderr}`).toBe(0);
      expect(
        run.stderr.split('\n').filter((text) => text.startsWith('error: ')),
        line,
      ).toEqual([]);
    }
  });
});
