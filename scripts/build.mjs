#!/usr/bin/env node
// `npm run build`: src/**/*.ts to dist/**/*.js, file for file (no bundle, no declarations: a CLI ships no types), and
// dist/help.json, the help texts the binary prints without loading the CLI.
// esbuild strips the types; checking them is `npm run check`'s job. tsc's emit parsed and bound the whole program again
// and took ten times as long, and `npm test` waited for it before its first test.
import { build } from 'esbuild';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';

const root = new URL('..', import.meta.url).pathname;
const sources = readdirSync(`${root}src`, { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))
  .map((path) => `${root}src/${path}`);

rmSync(`${root}dist`, { recursive: true, force: true });
await build({
  entryPoints: sources,
  outdir: `${root}dist`,
  outbase: `${root}src`,
  format: 'esm',
  platform: 'node',
  // tsconfig.json's target: the same class fields and syntax as the type-checked program.
  target: 'es2022',
  tsconfig: `${root}tsconfig.json`,
  logLevel: 'warning',
});

// The help texts the binary prints without loading commander (src/commands/prepared-help.ts): every help command line
// run through the CLI just built, as a pipe would receive it.
const { runCli } = await import(`${root}dist/cli.js`);
const { COMMANDS } = await import(`${root}dist/commands/command-list.js`);
const { prepareHelp, PREPARED_HELP_URL } = await import(`${root}dist/commands/prepared-help.js`);
/** A stream that keeps what is written to it. */
function collector() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}
const help = await prepareHelp(
  COMMANDS.map((/** @type {{ name: string }} */ command) => command.name),
  async (/** @type {readonly string[]} */ args) => {
    const [stdout, stderr] = [collector(), collector()];
    const context = { stdout: stdout.stream, stderr: stderr.stream, env: {}, signal: new AbortController().signal };
    const code = await runCli(args, context);
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  },
);
writeFileSync(PREPARED_HELP_URL, JSON.stringify(help));
