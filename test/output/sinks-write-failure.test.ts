import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { exitCodeFor, OutputError } from '../../src/errors.js';
import { FileSink, StreamSink, type UnitContent } from '../../src/output/sinks.js';
import { listFiles, useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('sinks-write-failure-');

function unitData(day: string): UnitContent {
  return {
    unit: { metric: { name: 'traffic' }, day },
    header: 'store_code,value\n',
    pieces: [Buffer.from('S001,1\n'), Buffer.from('S002,2\n')],
    rejected: [],
  };
}

/** A stream whose writes fail with `code`, as stdout does on a full disk (`> file`) or a closed pipe. */
function failingStream(code: string): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback(Object.assign(new Error(`${code}: write`), { code }));
    },
  }).on('error', () => {});
}

describe('StreamSink', () => {
  it('stdout on a full disk (`-o - > file`): exit 7, "cannot write to stdout: disk full"', async () => {
    const error: unknown = await new StreamSink(failingStream('ENOSPC')).commit(unitData('2026-11-20')).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OutputError);
    expect(exitCodeFor(error)).toBe(7);
    expect((error as Error).message).toMatch(/^cannot write to stdout: disk full \(ENOSPC\); /);
  });

  it('a closed pipe (`| head`) stays EPIPE, which the process edge turns into a quiet exit', async () => {
    const error: unknown = await new StreamSink(failingStream('EPIPE')).commit(unitData('2026-11-20')).catch((thrown: unknown) => thrown);
    expect(error).not.toBeInstanceOf(OutputError);
    expect(error).toMatchObject({ code: 'EPIPE' });
  });
});

describe('FileSink', () => {
  it('a file where the metric folder belongs: exit 7 naming the folder; the other metric files are untouched', async () => {
    const out = await tempDir();
    await mkdir(join(out, 'unique-users'));
    await writeFile(join(out, 'unique-users', '2026-11-20.csv'), 'old\n');
    await writeFile(join(out, 'traffic'), 'not a folder\n');
    const sink = new FileSink(out, { format: 'csv', shape: 'rows' });
    const error: unknown = await sink.commit(unitData('2026-11-20')).catch((thrown: unknown) => thrown);
    expect(exitCodeFor(error)).toBe(7);
    expect((error as Error).message).toBe(
      `cannot create folder ${join(out, 'traffic')}: a file is in the way of a folder (EEXIST); move that file or choose another path`,
    );
    expect(await listFiles(out)).toEqual(['traffic', 'unique-users/2026-11-20.csv']);
    expect(await readFile(join(out, 'traffic'), 'utf8')).toBe('not a folder\n');
  });
});
