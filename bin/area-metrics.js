#!/usr/bin/env node
// `--version` alone is answered before the command line's parser and its commands load (about 45 modules): scripts
// and package managers ask it often, and it is the same answer commander gives (the version, a newline, exit 0).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { VERSION } = await import('../dist/version.js');
  process.stdout.write(`${VERSION}\n`);
} else {
  await import('../dist/index.js');
}
