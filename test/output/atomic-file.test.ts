/**
 * The atomic writer against a file system that misbehaves on purpose: `node:fs/promises` is wrapped so a test can
 * cap how many bytes one write takes (a nearly full disk) and make one step fail with an errno. Everything else is
 * the real file system in a temp folder, so the bytes on disk are what is checked.
 */
import type * as FsPromises from 'node:fs/promises';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exitCodeFor, OutputError } from '../../src/errors.js';
import { checkWritableFolder, createFileExclusive, tempFilesInProgress, writeAll, writeFileAtomic } from '../../src/output/atomic-file.js';
import { useTempDirs } from '../helpers/tmp.js';
import { WRITE_ERRNO_WORDS } from '../helpers/errno.js';

type Step = 'mkdir' | 'open' | 'write' | 'sync' | 'rename' | 'link';

const faults = vi.hoisted(() => ({
  /** Most bytes one write takes; the rest is left to the caller, as write(2) does on a nearly full disk. */
  maxBytesPerWrite: undefined as number | undefined,
  /** The step that fails, with this errno code. A failing write first takes half of what it is given. */
  failing: undefined as { step: string; code: string } | undefined,
  /** Removing a temp file fails too (the disk went read-only). */
  rmFails: false,
  writeCalls: 0,
  /** Renames and fsyncs of opened-for-reading handles (a folder's), in order: what makes a write durable. */
  durability: [] as string[],
}));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const fail = (step: string): void => {
    if (faults.failing?.step === step) {
      throw Object.assign(new Error(`${faults.failing.code}: injected at ${step}`), { code: faults.failing.code });
    }
  };
  const wrapped = {
    ...real,
    mkdir: async (...args: Parameters<typeof real.mkdir>) => {
      fail('mkdir');
      return real.mkdir(...args);
    },
    rename: async (...args: Parameters<typeof real.rename>) => {
      fail('rename');
      await real.rename(...args);
      faults.durability.push(`rename to ${String(args[1])}`);
    },
    link: async (...args: Parameters<typeof real.link>) => {
      fail('link');
      return real.link(...args);
    },
    rm: async (...args: Parameters<typeof real.rm>) => {
      if (faults.rmFails) throw Object.assign(new Error('EROFS: injected at rm'), { code: 'EROFS' });
      return real.rm(...args);
    },
    open: async (...args: Parameters<typeof real.open>) => {
      // Only files opened for writing misbehave; the folder opened for its fsync does not, and is watched.
      if (args[1] !== 'wx') {
        const opened = await real.open(...args);
        const sync = opened.sync.bind(opened);
        return Object.assign(opened, {
          sync: async () => {
            await sync();
            faults.durability.push(`fsync ${String(args[0])}`);
          },
        });
      }
      fail('open');
      const handle = await real.open(...args);
      let writesSeen = 0;
      return new Proxy(handle, {
        get(target, property) {
          if (property === 'write') {
            return async (buffer: Uint8Array, offset = 0, length = buffer.length - offset) => {
              faults.writeCalls++;
              if (faults.failing?.step === 'write' && writesSeen++ > 0) fail('write');
              const cap = faults.failing?.step === 'write' ? Math.ceil(length / 2) : (faults.maxBytesPerWrite ?? length);
              return target.write(buffer, offset, Math.min(length, cap));
            };
          }
          if (property === 'sync') {
            return async () => {
              fail('sync');
              return target.sync();
            };
          }
          const value: unknown = Reflect.get(target, property);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  };
  return { ...wrapped, default: wrapped };
});

const tempDir = useTempDirs('atomic-file-');

afterEach(() => {
  faults.maxBytesPerWrite = undefined;
  faults.failing = undefined;
  faults.rmFails = false;
  faults.writeCalls = 0;
  faults.durability.length = 0;
});

const OLD = 'store_code,value\nS001,old\n';
const ERRNO_CODES = WRITE_ERRNO_WORDS;

/** A folder holding `day.csv` with the old content; the new content is large enough to need several writes. */
async function folderWithOldFile(): Promise<{ folder: string; path: string; next: Buffer }> {
  const folder = await tempDir();
  const path = join(folder, 'traffic', '2026-11-20.csv');
  await mkdir(join(folder, 'traffic'));
  await writeFile(path, OLD);
  const next = Buffer.from(`store_code,value\n${'S002,new\n'.repeat(20_000)}`);
  return { folder, path, next };
}

describe('writeAll', () => {
  it('goes on after a short write until every byte is written, in order', async () => {
    const written: number[] = [];
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, index) => index % 251));
    const handle = {
      write: async (buffer: Uint8Array, offset = 0, length = buffer.length) => {
        const taken = Math.min(length, 3);
        written.push(...buffer.subarray(offset, offset + taken));
        return { bytesWritten: taken, buffer };
      },
    };
    await writeAll(handle as never, bytes);
    expect(Buffer.from(written)).toEqual(bytes);
  });

  it('a write that takes no bytes and reports no error is an I/O error, not an endless loop', async () => {
    const handle = { write: async (buffer: Uint8Array) => ({ bytesWritten: 0, buffer }) };
    await expect(writeAll(handle as never, Buffer.from('abc'))).rejects.toMatchObject({ code: 'EIO' });
  });
});

describe('writeFileAtomic', () => {
  it('short writes: every byte of every chunk reaches the file', async () => {
    const { path, next } = await folderWithOldFile();
    faults.maxBytesPerWrite = 4093;
    await writeFileAtomic(path, ['header\n', new Uint8Array([0x41, 0x42, 0x0a]), next]);
    expect(await readFile(path)).toEqual(Buffer.concat([Buffer.from('header\nAB\n'), next]));
    expect(faults.writeCalls).toBeGreaterThan(next.length / 4093);
  });

  describe.each(ERRNO_CODES)('%s', (code, reason) => {
    it.each(['open', 'write', 'sync', 'rename'] as const)(
      `at %s: exit 7 naming the file and "${reason}"; the old file is untouched and no temp file is left`,
      async (step: Step) => {
        const { folder, path, next } = await folderWithOldFile();
        faults.failing = { step, code };
        const error: unknown = await writeFileAtomic(path, [next]).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error).toBeInstanceOf(OutputError);
        expect(exitCodeFor(error)).toBe(7);
        expect((error as Error).message).toMatch(new RegExp(`^cannot write ${escape(path)}: ${escape(reason)} \\(${code}\\); `));
        expect(await readFile(path, 'utf8')).toBe(OLD);
        expect(await readdir(join(folder, 'traffic'))).toEqual(['2026-11-20.csv']);
        expect(tempFilesInProgress.size).toBe(0);
      },
    );
  });

  it('makes the rename durable: the folder is fsynced after the file is renamed into it', async () => {
    const { path, next } = await folderWithOldFile();
    await writeFileAtomic(path, [next]);
    expect(faults.durability).toEqual([`rename to ${path}`, `fsync ${join(path, '..')}`]);
    expect(await readFile(path)).toEqual(next);
  });

  it('a folder that cannot be created is named as such', async () => {
    const folder = await tempDir();
    faults.failing = { step: 'mkdir', code: 'EROFS' };
    await expect(writeFileAtomic(join(folder, 'traffic', 'a.csv'), ['x'])).rejects.toThrow(
      new OutputError(
        `cannot create folder ${join(folder, 'traffic')}: read-only file system (EROFS); mount it read-write or choose another folder`,
      ),
    );
  });

  it('when the temp file cannot be removed either, the write error is the one reported', async () => {
    const { path, next } = await folderWithOldFile();
    faults.failing = { step: 'write', code: 'ENOSPC' };
    faults.rmFails = true;
    await expect(writeFileAtomic(path, [next])).rejects.toThrow(/: disk full \(ENOSPC\)/);
    expect(await readFile(path, 'utf8')).toBe(OLD);
  });

  it('an errno that means a bug (EBADF) stays an internal error', async () => {
    const { path, next } = await folderWithOldFile();
    faults.failing = { step: 'sync', code: 'EBADF' };
    const error: unknown = await writeFileAtomic(path, [next]).catch((thrown: unknown) => thrown);
    expect(error).not.toBeInstanceOf(OutputError);
    expect(exitCodeFor(error)).toBe(1);
    expect(await readFile(path, 'utf8')).toBe(OLD);
  });
});

describe('createFileExclusive', () => {
  it('creates the file whole, or leaves a name already taken as it is (false); no temp file either way', async () => {
    const folder = await tempDir();
    const path = join(folder, '_runs', 'seq-000000000001.json');
    expect(await createFileExclusive(path, ['{"run":', '1}\n'])).toBe(true);
    const before = await stat(path);
    expect(await createFileExclusive(path, ['{"run":2}\n'])).toBe(false);
    expect(await readFile(path, 'utf8')).toBe('{"run":1}\n');
    expect((await stat(path)).ino).toBe(before.ino);
    expect(await readdir(join(folder, '_runs'))).toEqual(['seq-000000000001.json']);
    expect(faults.durability).toContain(`fsync ${join(folder, '_runs')}`);
  });

  it("of writers racing for one name, exactly one gets it, and the file is that one's bytes", async () => {
    const folder = await tempDir();
    const path = join(folder, 'race.json');
    const bodies = Array.from({ length: 8 }, (_, index) => `{"writer":${index}}\n`);
    const won = await Promise.all(bodies.map((body) => createFileExclusive(path, [body])));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await readFile(path, 'utf8')).toBe(bodies[won.indexOf(true)]);
    expect(await readdir(folder)).toEqual(['race.json']);
  });

  it('on a file system without hard links: exit 7 naming the file and the reason, nothing left', async () => {
    const folder = await tempDir();
    const path = join(folder, 'seq-000000000001.json');
    faults.failing = { step: 'link', code: 'EPERM' };
    const error = await createFileExclusive(path, ['{}']).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutputError);
    expect(exitCodeFor(error)).toBe(7);
    expect(String((error as Error).message)).toContain(path);
    expect(await readdir(folder)).toEqual([]);
    expect(tempFilesInProgress.size).toBe(0);
  });
});

describe('checkWritableFolder', () => {
  it('creates a missing folder and leaves nothing in it', async () => {
    const folder = join(await tempDir(), 'a', 'b');
    await checkWritableFolder(folder);
    expect(await readdir(folder)).toEqual([]);
  });

  it.runIf(process.platform === 'linux')('a folder the kernel will not create (/proc/...) is exit 7 at once, naming it', async () => {
    const folder = `/proc/area-metrics-${process.pid}/data`;
    const error: unknown = await checkWritableFolder(folder).catch((thrown: unknown) => thrown);
    expect(exitCodeFor(error)).toBe(7);
    expect((error as Error).message).toBe(
      `cannot create folder /proc/area-metrics-${process.pid}: the file system there takes no new folders (ENOENT); choose another path`,
    );
  });

  it.each(ERRNO_CODES)('%s when the probe file is created: exit 7 naming the folder and "%s"', async (code, reason) => {
    const folder = await tempDir();
    faults.failing = { step: 'open', code };
    const error: unknown = await checkWritableFolder(folder).catch((thrown: unknown) => thrown);
    expect(exitCodeFor(error)).toBe(7);
    expect((error as Error).message).toMatch(new RegExp(`^cannot write to folder ${escape(folder)}: ${escape(reason)} \\(${code}\\); `));
    expect(await readdir(folder)).toEqual([]);
  });

  it('a disk that takes no byte fails the check, and the probe file is removed', async () => {
    const folder = await tempDir();
    faults.maxBytesPerWrite = 0;
    await expect(checkWritableFolder(folder)).rejects.toThrow(/^cannot write to folder .*: I\/O error \(EIO\)/);
    expect(await readdir(folder)).toEqual([]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
