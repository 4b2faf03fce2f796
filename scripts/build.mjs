#!/usr/bin/env node
// `npm run build`: src/**/*.ts to dist/**/*.js, file for file (no bundle, no declarations: a CLI ships no types).
// esbuild strips the types; checking them is `npm run check`'s job. tsc's emit parsed and bound the whole program again
// and took ten times as long, and `npm test` waited for it before its first test.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';

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
