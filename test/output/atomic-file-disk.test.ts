/**
 * The atomic writer on a disk that really fails: a small tmpfs, filled up or remounted read-only. Needs root (CI
 * runs as root); skipped with the reason otherwise.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/errors.js';
import { checkWritableFolder, writeFileAtomic } from '../../src/output/atomic-file.js';
import { mountTmpfs, tmpfsUnavailable, type Tmpfs } from '../helpers/tmpfs.js';

const OLD = 'store_code,value\nS001,old\n';
/** About 40 KB: ten pages, so a disk with a few pages free takes part of it, then fails. */
const NEXT = Buffer.from(`store_code,value\n${'S002,new\n'.repeat(4_500)}`);

let disk: Tmpfs | undefined;

beforeEach((context) => {
  const reason = tmpfsUnavailable();
  if (reason !== undefined) context.skip(reason);
  disk = mountTmpfs(256);
});

afterEach(() => {
  disk?.unmount();
  disk = undefined;
});

function mounted(): Tmpfs {
  if (!disk) throw new Error('no tmpfs mounted');
  return disk;
}

async function oldFile(): Promise<string> {
  const folder = join(mounted().path, 'traffic');
  await mkdir(folder);
  const path = join(folder, '2026-11-20.csv');
  await writeFile(path, OLD);
  return path;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error: unknown = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof Error)) throw new Error('expected the write to fail');
  return error;
}

describe('a disk that fills up during the write', () => {
  it('exit 7 "disk full" naming the file; the old file is byte-identical and no temp file is left', async () => {
    const path = await oldFile();
    await mounted().fill(8 * 1024);
    const error = await failure(writeFileAtomic(path, [NEXT.subarray(0, 10_000), NEXT.subarray(10_000)]));
    expect(exitCodeFor(error)).toBe(7);
    expect(error.message).toBe(`cannot write ${path}: disk full (ENOSPC); free some space and run again`);
    expect(await readFile(path, 'utf8')).toBe(OLD);
    expect(await readdir(join(mounted().path, 'traffic'))).toEqual(['2026-11-20.csv']);
    // The same write succeeds once there is room: the failure above was the disk's.
    await mounted().unfill();
    await writeFileAtomic(path, [NEXT]);
    expect(await readFile(path)).toEqual(NEXT);
  });

  it('the writability check fails on a disk without a free byte', async () => {
    await mounted().fill();
    const error = await failure(checkWritableFolder(mounted().path));
    expect(exitCodeFor(error)).toBe(7);
    expect(error.message).toBe(`cannot write to folder ${mounted().path}: disk full (ENOSPC); free some space and run again`);
    expect((await readdir(mounted().path)).filter((name) => name !== '.filler')).toEqual([]);
  });
});

describe('a read-only file system', () => {
  it('replacing a file: exit 7 "read-only file system"; the old file is byte-identical', async () => {
    const path = await oldFile();
    mounted().readOnly();
    const error = await failure(writeFileAtomic(path, [NEXT]));
    expect(exitCodeFor(error)).toBe(7);
    expect(error.message).toBe(`cannot write ${path}: read-only file system (EROFS); mount it read-write or choose another folder`);
    expect(await readFile(path, 'utf8')).toBe(OLD);
  });

  it('a folder still to be made is named with the real reason (Node alone says ENOENT)', async () => {
    mounted().readOnly();
    const folder = join(mounted().path, 'out', 'traffic');
    const error = await failure(writeFileAtomic(join(folder, '2026-11-20.csv'), [NEXT]));
    expect(exitCodeFor(error)).toBe(7);
    expect(error.message).toBe(
      `cannot create folder ${folder}: read-only file system (EROFS); mount it read-write or choose another folder`,
    );
  });

  it('the writability check fails for an existing folder and for one still to be made', async () => {
    mounted().readOnly();
    for (const folder of [mounted().path, join(mounted().path, 'out')]) {
      const error = await failure(checkWritableFolder(folder));
      expect(exitCodeFor(error)).toBe(7);
      expect(error.message).toMatch(/: read-only file system \(EROFS\); mount it read-write or choose another folder$/);
      expect(error.message).toContain(folder);
    }
  });
});
