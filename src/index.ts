import { rmSync } from 'node:fs';
import { createCli } from './cli.js';
import type { CommandContext } from './commands/context.js';
import { exitCodeFor, InterruptedError, messageOf } from './errors.js';
import { tempFilesInProgress } from './output/atomic-file.js';
import { asOutputError } from './output/write-failure.js';

// The only module that touches process-wide state: signals and the exit code.

// The AWS SDK prints a notice about future Node versions straight to stderr, outside our log format; cron reads
// every stderr line, so it is silenced here (engines in package.json says which Node this release runs on).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const controller = new AbortController();
let interrupted: InterruptedError | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) {
      // Second signal: stop now, but still leave no half-written file behind.
      for (const temp of tempFilesInProgress) rmSync(temp, { force: true });
      process.exit(interrupted.exitCode);
    }
    interrupted = new InterruptedError(signal);
    controller.abort(interrupted);
  });
}

const context: CommandContext = {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
  onReloadSignal: (reload) => {
    process.on('SIGHUP', reload);
    return () => process.off('SIGHUP', reload);
  },
};
const cli = createCli(context);

// A closed stdout (`| head`) is not an error worth a stack trace; it ends the run, but a failure already reported
// keeps its exit code (cron must not read "0" after an error line).
// Any other failure (`> file` on a full disk) is an output failure: an import reports it for the unit it was
// writing; for anything else that prints (--dry-run, token) it is reported at the end rather than exiting 0.
let stdoutFailure: unknown;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(interrupted?.exitCode ?? cli.reporter.exitCodeSoFar ?? 0);
  stdoutFailure ??= asOutputError(error, 'cannot write to stdout');
});

// An interrupted import throws InterruptedError (130/143); a server (sandbox, broker) stopping on a signal is its
// normal end and returns 0.
const exitCode = await cli.run(process.argv.slice(2));
// A stream's error arrives after the write that caused it: let stdout settle before deciding.
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
if (exitCode === 0 && stdoutFailure !== undefined) cli.reporter.line(messageOf(stdoutFailure));
process.exitCode = exitCode === 0 && stdoutFailure !== undefined ? exitCodeFor(stdoutFailure) : exitCode;
