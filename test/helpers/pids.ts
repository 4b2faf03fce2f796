import { spawn, type ChildProcess } from 'node:child_process';

/** The pid of a process that has just exited: for "its process is gone" cases. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  if (child.pid === undefined) throw new Error('could not spawn node');
  return child.pid;
}

/** A process that stays alive until killed: for "a live run" cases. Kill it with `child.kill()`. */
export async function livePid(): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  if (child.pid === undefined) throw new Error('could not spawn node');
  return child as ChildProcess & { pid: number };
}
