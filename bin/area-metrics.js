#!/usr/bin/env node
// Two answers come before the command line's parser and its commands load (about 45 modules): `--version` alone (the
// version, a newline, exit 0, as commander gives it) and help printed to a file, a pipe or a terminal of 80 columns or
// more, from the texts the build prepared by running the CLI itself (dist/commands/prepared-help.js). Scripts, package managers and `| less` ask them
// often. If stdout fails, the full CLI answers again and reports it (a closed pipe ends quietly, as there).
const args = process.argv.slice(2);
let answered = false;
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { VERSION } = await import('../dist/version.js');
  process.stdout.write(`${VERSION}\n`);
  answered = true;
} else {
  const { answerHelp } = await import('../dist/commands/prepared-help.js');
  answered = answerHelp(args, process.stdout);
}
if (answered) {
  process.stdout.once('error', (error) => {
    if (/** @type {NodeJS.ErrnoException} */ (error).code === 'EPIPE') process.exit(0);
    void runCli();
  });
} else {
  await runCli();
}

async function runCli() {
  await import('../dist/index.js');
}
