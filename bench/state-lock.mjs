#!/usr/bin/env node
// Twelve `accept`s of twelve different days at once (the built binary, twelve processes) into one folder whose state
// lock a killed run left behind, `--trials` times (default 20): every trial must record every day. Prints each
// trial's days recorded and time, and exits 1 if a day was lost. Standalone: `npm run build && node bench/state-lock.mjs`.
import { spawn } from 'node:child_process';
import { readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { daysOfRanges } from '../dist/window/day-ranges.js';
import { tempDir } from './lib.mjs';

const BIN = new URL('../bin/area-metrics.js', import.meta.url).pathname;
const STATE = '.area-metrics-state.json';
const { values: flags } = parseArgs({ options: { trials: { type: 'string', default: '20' } } });
const DAYS = Array.from({ length: 12 }, (_, index) => new Date(Date.now() - (index + 3) * 86_400_000).toISOString().slice(0, 10)).sort();

/** @param {string[]} args @returns {Promise<number | null>} */
function run(args) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', resolve));
}

const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
await new Promise((resolve) => dead.once('exit', resolve));
let lost = 0;
for (let trial = 1; trial <= Number(flags.trials); trial++) {
  const out = await tempDir('state-lock');
  await writeFile(join(out, STATE), '{"version":5,"metrics":{},"storeSets":{}}\n');
  await symlink(String(dead.pid), join(out, `${STATE}.lock`));
  const started = performance.now();
  const codes = await Promise.all(DAYS.map((day) => run(['accept', 'traffic', '--date', day, '-o', out])));
  const ms = performance.now() - started;
  const state = JSON.parse(await readFile(join(out, STATE), 'utf8'));
  const recorded = new Set(daysOfRanges(state.metrics.traffic?.accepted ?? []));
  const missing = DAYS.filter((day) => !recorded.has(day));
  lost += missing.length;
  const failed = codes.filter((code) => code !== 0).length;
  console.log(`trial ${trial}: ${DAYS.length - missing.length}/${DAYS.length} days recorded, ${failed} runs failed, ${Math.round(ms)} ms`);
  await rm(out, { recursive: true, force: true });
}
console.log(lost === 0 ? 'every day recorded in every trial' : `${lost} days lost`);
process.exitCode = lost === 0 ? 0 : 1;
