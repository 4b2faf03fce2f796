import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small tmpfs mounted for a test: a real disk that really fills up or goes read-only. */
export interface Tmpfs {
  readonly path: string;
  /** Fills the disk with a hidden file, then frees `leaveBytes` (rounded up to whole pages) of it. */
  fill(leaveBytes?: number): Promise<void>;
  /** Removes what `fill` wrote. */
  unfill(): Promise<void>;
  readOnly(): void;
  readWrite(): void;
  /** Unmounts (lazily if something still holds it) and removes the mount point. */
  unmount(): void;
}

const PAGE = 4096;
let unavailable: string | undefined | null = null;

/**
 * Why this machine cannot mount a tmpfs, or undefined when it can. Mounting needs root (CI runs as root); tests
 * that need a real failing disk skip with this reason otherwise. Tried once per test file.
 */
export function tmpfsUnavailable(): string | undefined {
  if (unavailable !== null) return unavailable;
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    unavailable = 'needs root on Linux to mount a small tmpfs (CI runs as root)';
    return unavailable;
  }
  try {
    mountTmpfs(64).unmount();
    unavailable = undefined;
  } catch (error) {
    unavailable = `cannot mount a tmpfs here: ${(error as Error).message.split('\n')[0]}`;
  }
  return unavailable;
}

export function mountTmpfs(sizeKb: number): Tmpfs {
  const path = mkdtempSync(join(tmpdir(), 'area-metrics-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=0755`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    throw error;
  }
  const filler = join(path, '.filler');
  const remount = (mode: 'ro' | 'rw'): void => {
    execFileSync('mount', ['-o', `remount,${mode}`, path], { stdio: 'pipe' });
  };
  return {
    path,
    async fill(leaveBytes = 0) {
      const handle = await open(filler, 'a');
      try {
        for (const size of [64 * 1024, PAGE, 1]) {
          const block = Buffer.alloc(size);
          for (;;) {
            try {
              await handle.write(block);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        await handle.close();
      }
      if (leaveBytes > 0) {
        const { size } = await stat(filler);
        await truncate(filler, Math.max(0, size - Math.ceil(leaveBytes / PAGE) * PAGE));
      }
    },
    async unfill() {
      await rm(filler, { force: true });
    },
    readOnly: () => remount('ro'),
    readWrite: () => remount('rw'),
    unmount() {
      try {
        execFileSync('umount', [path], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      }
      rmSync(path, { recursive: true, force: true });
    },
  };
}
