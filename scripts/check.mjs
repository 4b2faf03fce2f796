#!/usr/bin/env node
// `npm run check`: typecheck and lint in one process that builds the TypeScript program once. tsc and the type-aware
// lint rules each need the program type-checked; run apart (`npm run typecheck`, `npm run lint`) they do that work
// twice. Here the program tsc checks is handed to typescript-eslint, whose rules then find its types already known.
// Prints tsc's diagnostics, then ESLint's report; exits 1 if either found an error. `check.mjs typecheck` or
// `check.mjs lint` does one half (`npm run typecheck`, `npm run lint`): on the same program, which never sees dist/.
import ts from 'typescript';
import { ESLint } from 'eslint';

const root = new URL('..', import.meta.url).pathname;
const only = process.argv[2];
if (only !== undefined && only !== 'typecheck' && only !== 'lint') throw new Error(`usage: check.mjs [typecheck|lint], not ${only}`);
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;

const config = ts.getParsedCommandLineOfConfigFile(
  `${root}tsconfig.json`,
  { noEmit: true },
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  },
);
if (config === undefined) throw new Error('cannot read tsconfig.json');
// dist/ unseen: bench's imports of ../dist/*.js are checked against src/ (tsconfig's rootDirs), whether or not a build
// is there or half-written by the build `npm test` runs beside this. (tsc alone would read dist/'s untyped JavaScript.)
const dist = `${root}dist/`;
const host = ts.createCompilerHost(config.options);
const { fileExists, directoryExists } = host;
host.fileExists = (/** @type {string} */ path) => !path.startsWith(dist) && fileExists.call(host, path);
host.directoryExists = (/** @type {string} */ path) => !`${path}/`.startsWith(dist) && (directoryExists?.call(host, path) ?? true);
const program = ts.createProgram({
  rootNames: config.fileNames,
  options: config.options,
  projectReferences: config.projectReferences,
  host,
});
const diagnostics = only === 'lint' ? [] : [...config.errors, ...ts.getPreEmitDiagnostics(program)];
/** @type {ts.FormatDiagnosticsHost} */
const formatHost = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => '\n' };
if (diagnostics.length > 0) {
  const format = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
  process.stdout.write(format(diagnostics, formatHost));
}
if (only !== 'lint') console.log(`typecheck: ${diagnostics.length} error(s) in ${config.fileNames.length} files (${elapsed()})`);

/** Lints the program's TypeScript files with its types, every other file as eslint.config.js says; returns the errors. */
async function lint() {
  const typed = program
    .getRootFileNames()
    .filter((file) => /\.[cm]?ts$/.test(file))
    .map((file) => file.slice(root.length));
  const eslint = new ESLint({
    cwd: root,
    overrideConfig: [{ files: typed, languageOptions: { parserOptions: { programs: [program], projectService: false, project: false } } }],
  });
  const results = await eslint.lintFiles(['.']);
  const errors = results.reduce((sum, result) => sum + result.errorCount, 0);
  const warnings = results.reduce((sum, result) => sum + result.warningCount, 0);
  const report = await (await eslint.loadFormatter('stylish')).format(results);
  if (report !== '') process.stdout.write(report);
  console.log(`lint: ${errors} error(s), ${warnings} warning(s) in ${results.length} files (${elapsed()})`);
  return errors;
}

const lintErrors = only === 'typecheck' ? 0 : await lint();
process.exitCode = diagnostics.length > 0 || lintErrors > 0 ? 1 : 0;
