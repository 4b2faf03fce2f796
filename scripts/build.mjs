#!/usr/bin/env node
// `npm run build`: src/**/*.ts to dist/**/*.js, file for file (no declarations: a CLI ships no types), with zod and
// structured-headers bundled in (BUNDLED), and dist/help.json, the help texts the binary prints without the CLI.
// esbuild strips the types; checking them is `npm run check`'s job. tsc's emit parsed and bound the whole program again
// and took ten times as long, and `npm test` waited for it before its first test.
import { build } from 'esbuild';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';

const root = new URL('..', import.meta.url).pathname;
const sources = readdirSync(`${root}src`, { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))
  .map((path) => `${root}src/${path}`);

/**
 * ESM packages of many modules, bundled: into one chunk under dist/vendor/ when several of our files import one
 * (zod), into the one file that imports it otherwise (structured-headers). zod is 95 modules, and resolving, reading and linking each cost about 30 ms of CPU at every start of
 * a command that validates anything; structured-headers is 7. Everything else stays as it is: our files one for one
 * (each is its own entry, so stacks and the bench's breakdown name them), other packages from node_modules.
 */
const BUNDLED = /^(zod|structured-headers)(\/|$)/;
/** @type {import('esbuild').Plugin} */
const onlyBundled = {
  name: 'only-bundled-packages',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      const bundled = args.kind === 'entry-point' || BUNDLED.test(args.path) || args.importer.includes('/node_modules/');
      return bundled ? undefined : { path: args.path, external: true };
    });
  },
};

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
  bundle: true,
  splitting: true,
  chunkNames: 'vendor/[name]-[hash]',
  plugins: [onlyBundled],
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
