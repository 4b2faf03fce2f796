import fs from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuthError, exitCodeFor, messageOf, OutputError, UnavailableError, UsageError } from '../../src/errors.js';
import type { Logger } from '../../src/log/logger.js';
import { CONTENT_HASH_METADATA, endpointFrom, ObjectStore, type ObjectStoreConfig } from '../../src/output/object-store.js';
import { objectStoreError } from '../../src/output/object-store-errors.js';
import { PROBE_ETAG, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_SESSION_TOKEN, startS3, type S3Harness, resetS3 } from '../helpers/s3.js';

let s3: S3Harness;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3.close();
});

interface Logged {
  readonly level: string;
  readonly message: string;
}
let logged: Logged[];
const logger: Logger = {
  debug: (message) => void logged.push({ level: 'debug', message }),
  info: (message) => void logged.push({ level: 'info', message }),
  warn: (message) => void logged.push({ level: 'warn', message }),
  error: (message) => void logged.push({ level: 'error', message }),
};

beforeEach(() => {
  logged = [];
  resetS3(s3);
});

function config(overrides: Partial<ObjectStoreConfig> = {}): ObjectStoreConfig {
  return {
    env: { AWS_ENDPOINT_URL_S3: s3.endpoint, AWS_REGION: 'us-east-1' },
    forcePathStyle: true,
    retries: 1,
    timeoutMs: 5000,
    logger,
    credentials: { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET_ACCESS_KEY, sessionToken: S3_SESSION_TOKEN },
    ...overrides,
  };
}

function store(bucket = s3.bucket, overrides: Partial<ObjectStoreConfig> = {}): ObjectStore {
  return ObjectStore.create(bucket, config(overrides));
}

async function failureOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

function expectNoSecret(text: string): void {
  for (const secret of [S3_SECRET_ACCESS_KEY, S3_SESSION_TOKEN, S3_ACCESS_KEY_ID]) expect(text).not.toContain(secret);
}

const puts = (key: string): number => s3.requests.filter((request) => request.method === 'PUT' && request.key === key).length;

describe('ObjectStore.writeIfChanged', () => {
  it('writes the whole object in one PUT with its hash, and leaves an object holding the same bytes alone', async () => {
    const objects = store();
    const key = 'write/traffic/2026-11-20.csv';
    expect(await objects.writeIfChanged(key, Buffer.from('a,b\n1,2\n'))).toBe('written');
    const first = await s3.head(key);
    expect(first?.metadata[CONTENT_HASH_METADATA]).toMatch(/^[0-9a-f]{64}$/);
    expect(await s3.read(key)).toEqual(Buffer.from('a,b\n1,2\n'));

    expect(await objects.writeIfChanged(key, Buffer.from('a,b\n1,2\n'))).toBe('unchanged');
    expect(puts(key)).toBe(1);
    expect((await s3.head(key))?.etag).toBe(first?.etag);

    expect(await objects.writeIfChanged(key, Buffer.from('a,b\n1,3\n'))).toBe('written');
    expect(puts(key)).toBe(2);
    expect(await s3.read(key)).toEqual(Buffer.from('a,b\n1,3\n'));
    // One PUT with the length known: no streaming chunk encoding a store could keep in the object.
    const put = s3.requests.filter((request) => request.method === 'PUT').at(-1)!;
    expect(put.headers['content-length']).toBe('8');
    expect(put.headers['content-encoding']).toBeUndefined();
    expect(put.headers['x-amz-decoded-content-length']).toBeUndefined();
    objects.close();
  });

  it('writes a sub-array view of a larger buffer as exactly its own bytes', async () => {
    const objects = store();
    const whole = Buffer.from('xxHELLOyy');
    await objects.writeIfChanged('write/view.txt', whole.subarray(2, 7));
    expect((await s3.read('write/view.txt'))?.toString()).toBe('HELLO');
    objects.close();
  });

  it("is exit 7 naming the bucket, the key and the store's code when the store refuses the write", async () => {
    await store().writeIfChanged('denied/a.csv', Buffer.from('old'));
    s3.faults.denyWrites = true;
    const error = await failureOf(store().writeIfChanged('denied/a.csv', Buffer.from('new')));
    expect(error).toBeInstanceOf(OutputError);
    expect(exitCodeFor(error)).toBe(7);
    expect(messageOf(error)).toContain(`s3://${s3.bucket}/denied/a.csv`);
    expect(messageOf(error)).toContain('AccessDenied');
    expectNoSecret(messageOf(error));
    expect(await s3.read('denied/a.csv')).toEqual(Buffer.from('old'));
  });

  it('is exit 7 for a bucket that does not exist', async () => {
    const error = await failureOf(store('no-such-bucket').writeIfChanged('a.csv', Buffer.from('x')));
    expect(exitCodeFor(error)).toBe(7);
    expect(messageOf(error)).toMatch(/s3:\/\/no-such-bucket\/a\.csv.*NoSuchBucket/);
  });

  it('is exit 4 after its retries when the store is down, and the old object stays', async () => {
    await store().writeIfChanged('down/a.csv', Buffer.from('old'));
    s3.faults.down = true;
    const error = await failureOf(store(s3.bucket, { retries: 2 }).writeIfChanged('down/a.csv', Buffer.from('new')));
    expect(error).toBeInstanceOf(UnavailableError);
    expect(messageOf(error)).toContain(`s3://${s3.bucket}/down/a.csv`);
    expect(messageOf(error)).toContain(s3.endpoint);
    expect(messageOf(error)).toMatch(/after 3 attempts/);
    s3.faults.down = false;
    expect(await s3.read('down/a.csv')).toEqual(Buffer.from('old'));
  });
});

describe('ObjectStore.read', () => {
  it('gives the bytes and ETag, and undefined for a missing key', async () => {
    const objects = store();
    await objects.writeIfChanged('read/a.json', Buffer.from('{}'));
    const found = await objects.read('read/a.json');
    expect(found?.body.toString()).toBe('{}');
    expect(found?.etag).toBe((await s3.head('read/a.json'))?.etag);
    expect(await objects.read('read/missing.json')).toBeUndefined();
  });

  it('is a configuration error (exit 2) for a bucket that does not exist', async () => {
    const error = await failureOf(store('no-such-bucket').read('state.json'));
    expect(error).toBeInstanceOf(UsageError);
    expect(messageOf(error)).toContain('NoSuchBucket');
  });

  it('is exit 3 when the store does not know the access key', async () => {
    const error = await failureOf(
      store(s3.bucket, { credentials: { accessKeyId: 'AKIAUNKNOWNKEY0000', secretAccessKey: 'an-unknown-secret-key' } }).read('a'),
    );
    expect(error).toBeInstanceOf(AuthError);
    expect(messageOf(error)).toContain('InvalidAccessKeyId');
    expect(messageOf(error)).not.toContain('AKIAUNKNOWNKEY0000');
    expect(messageOf(error)).not.toContain('an-unknown-secret-key');
  });

  it("takes the access key from the run's environment, not the process's", async () => {
    expect(process.env.AWS_ACCESS_KEY_ID).toBeUndefined();
    const env = {
      ...config().env,
      AWS_ACCESS_KEY_ID: S3_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY,
      AWS_SESSION_TOKEN: S3_SESSION_TOKEN,
    };
    const fromEnv = store(s3.bucket, { env, credentials: undefined });
    await fromEnv.writeIfChanged('env-key', Buffer.from('kept'));
    expect((await fromEnv.read('env-key'))?.body.toString()).toBe('kept');
    const unknownKey = { ...env, AWS_ACCESS_KEY_ID: 'AKIAUNKNOWNKEY0001' };
    expect(await failureOf(store(s3.bucket, { env: unknownKey, credentials: undefined }).read('env-key'))).toBeInstanceOf(AuthError);
  });
});

describe('ObjectStore.update', () => {
  const append = (item: string) => (current: Buffer | undefined) => {
    const items = current === undefined ? [] : (JSON.parse(current.toString()) as string[]);
    return Buffer.from(JSON.stringify([...items, item]));
  };

  it('creates the object with If-None-Match: *, then changes it with If-Match on the ETag it read', async () => {
    const objects = store();
    const key = 'update/create.json';
    expect(await objects.update(key, append('a'))).toBe(true);
    expect(await objects.update(key, append('b'))).toBe(true);
    expect(JSON.parse((await s3.read(key))!.toString())).toEqual(['a', 'b']);
    const conditional = s3.requests
      .filter((request) => request.method === 'PUT')
      .map((request) => [request.headers['if-match'] ?? request.headers['if-none-match'], request.status]);
    // The first conditional write of a run asks against a version that cannot exist, and is refused: the store enforces.
    expect(conditional[0]).toEqual([PROBE_ETAG, 412]);
    expect(conditional[1]).toEqual(['*', 200]);
    expect(conditional[2]?.[1]).toBe(200);
    expect(conditional[2]?.[0]).toMatch(/^"[0-9a-f]+"$/);
    expect(conditional).toHaveLength(3);
    expect(logged.filter((line) => line.level === 'warn')).toEqual([]);
  });

  it("reads back the whole object right after its write, however late the store's disk takes the bytes", async () => {
    const key = 'update/slow-disk/.area-metrics-state.json';
    // In this process (where the harness runs s3rver), bytes written through a file stream (an object's, in s3rver)
    // reach the disk 50 ms late; whole-file writes (its metadata) are on time.
    const { write, writev } = fs;
    const late = <F extends (...args: never[]) => void>(original: F): F =>
      ((...args: never[]) => {
        if (new Error().stack?.includes('internal/fs/streams') === true) setTimeout(() => original.apply(fs, args), 50);
        else original.apply(fs, args);
      }) as F;
    fs.write = late(write);
    fs.writev = late(writev);
    try {
      const objects = store();
      for (const item of ['a', 'b', 'c']) await objects.update(key, append(item));
      expect((await objects.read(key))?.body.toString()).toBe('["a","b","c"]');
    } finally {
      Object.assign(fs, { write, writev });
    }
  });

  it('writes nothing when the change leaves the object as it is', async () => {
    const objects = store();
    await objects.update('update/same.json', append('a'));
    s3.requests.length = 0;
    expect(await objects.update('update/same.json', () => undefined)).toBe(false);
    expect(puts('update/same.json')).toBe(0);
  });

  it('loses neither change when two runs read the same version and write at the same moment', async () => {
    const key = 'update/race.json';
    await store().update(key, append('before'));
    s3.requests.length = 0;
    s3.faults.gatherStatePuts = 0;
    // Two separate clients, like two processes: each reads the object, then both write against the same ETag.
    const [first, second] = [store(), store()];
    await Promise.all([first.read(key), second.read(key)]);
    const results = await Promise.all([first.update(key, append('first')), second.update(key, append('second'))]);
    expect(results).toEqual([true, true]);
    expect(new Set(JSON.parse((await s3.read(key))!.toString()) as string[])).toEqual(new Set(['before', 'first', 'second']));
  });

  it('makes the loser of a collision read again and merge (a 412 is seen, both items kept)', async () => {
    const key = `update/gathered/.area-metrics-state.json`;
    await store().update(key, append('before'));
    s3.requests.length = 0;
    s3.faults.gatherStatePuts = 2;
    const [first, second] = [store(), store()];
    await Promise.all([first.update(key, append('first')), second.update(key, append('second'))]);
    expect(JSON.parse((await s3.read(key))!.toString())).toEqual(expect.arrayContaining(['before', 'first', 'second']));
    expect(
      s3.requests.some(
        (request) =>
          request.method === 'PUT' && request.key === key && request.status === 412 && request.headers['if-match'] !== PROBE_ETAG,
      ),
    ).toBe(true);
  });

  it('warns once and writes plainly where the store ignores conditions', async () => {
    s3.faults.enforceConditions = false;
    const objects = store();
    expect(await objects.update('update/ignored.json', append('a'))).toBe(true);
    expect(await objects.update('update/ignored.json', append('b'))).toBe(true);
    expect(JSON.parse((await s3.read('update/ignored.json'))!.toString())).toEqual(['a', 'b']);
    const warnings = logged.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/ignores conditional writes.*s3:\/\/.*update\/ignored\.json/);
  });

  it('writes plainly, with the one warning, where the store enforces If-Match but answers 501 to If-None-Match', async () => {
    s3.faults.unsupportedIfNoneMatch = true;
    try {
      const objects = store();
      let reads = 0;
      const change = (current: Buffer | undefined): Uint8Array => {
        reads++;
        return append('a')(current);
      };
      // The probe (If-Match) is refused, so conditions look enforced; creating the object then needs If-None-Match.
      expect(await objects.update('update/no-if-none-match.json', change)).toBe(true);
      expect(reads).toBe(1);
      expect(await objects.update('update/no-if-none-match.json', append('b'))).toBe(true);
      expect(JSON.parse((await s3.read('update/no-if-none-match.json'))!.toString())).toEqual(['a', 'b']);
      const statuses = s3.requests.filter((request) => request.method === 'PUT').map((request) => request.status);
      expect(statuses).toEqual([412, 501, 200, 200]);
      const warnings = logged.filter((line) => line.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toMatch(/ignores conditional writes \(If-None-Match\).*update\/no-if-none-match\.json/);
    } finally {
      s3.faults.unsupportedIfNoneMatch = false;
    }
  });

  it('stops with exit 7 when every write finds the object changed again', async () => {
    const objects = store();
    const key = 'update/busy.json';
    await objects.update(key, append('a'));
    s3.faults.refuseConditionalPuts = true;
    let reads = 0;
    const error = await failureOf(
      objects.update(key, (current) => {
        reads++;
        return append('b')(current);
      }),
    );
    expect(error).toBeInstanceOf(OutputError);
    expect(messageOf(error)).toMatch(/cannot update s3:\/\/.*update\/busy\.json.*10 times/);
    expect(reads).toBe(10);
    s3.faults.refuseConditionalPuts = false;
    expect(JSON.parse((await s3.read(key))!.toString())).toEqual(['a']);
  });
});

describe('ObjectStore.createIfAbsent', () => {
  it("creates with If-None-Match: *; another writer's object there is false, its own bytes (a retried PUT) true", async () => {
    const objects = store();
    expect(await objects.createIfAbsent('create/one.json', Buffer.from('{"a":1}'))).toBe(true);
    expect(await objects.createIfAbsent('create/one.json', Buffer.from('{"a":2}'))).toBe(false);
    expect(await objects.createIfAbsent('create/one.json', Buffer.from('{"a":1}'))).toBe(true);
    expect((await s3.read('create/one.json'))!.toString()).toBe('{"a":1}');
    const puts = s3.requests.filter((request) => request.method === 'PUT');
    expect(puts.map((request) => [request.headers['if-none-match'], request.status])).toEqual([
      ['*', 200],
      ['*', 412],
      ['*', 412],
    ]);
  });

  it('waits out a 409 (another write of the key in flight, which may yet fail) rather than take it for "exists"', async () => {
    const objects = store(s3.bucket, { retries: 0 });
    s3.faults.answerAll = { status: 409, code: 'ConditionalRequestConflict', message: 'in flight', methods: ['PUT'] };
    const clear = setTimeout(() => (s3.faults.answerAll = undefined), 150);
    try {
      expect(await objects.createIfAbsent('create/conflict.json', Buffer.from('{}'))).toBe(true);
    } finally {
      clearTimeout(clear);
      s3.faults.answerAll = undefined;
    }
    const statuses = s3.requests.filter((request) => request.method === 'PUT').map((request) => request.status);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.slice(0, -1).every((status) => status === 409) && statuses.length > 1).toBe(true);
  });

  it('where the store answers 501 to If-None-Match: written plainly, with the one warning', async () => {
    s3.faults.unsupportedIfNoneMatch = true;
    try {
      expect(await store().createIfAbsent('create/plain.json', Buffer.from('{}'))).toBe(true);
      expect((await s3.read('create/plain.json'))!.toString()).toBe('{}');
      expect(logged.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
        expect.stringMatching(/ignores conditional writes \(If-None-Match\).*create\/plain\.json/),
      ]);
    } finally {
      s3.faults.unsupportedIfNoneMatch = false;
    }
  });
});

describe('objectStoreError', () => {
  const sdkError = (name: string, status: number, message = ''): Error =>
    Object.assign(new Error(message), {
      name,
      $fault: status >= 500 ? 'server' : 'client',
      $metadata: { httpStatusCode: status, attempts: 1 },
    });

  it('maps a wrong region to a configuration error naming AWS_REGION', () => {
    const error = objectStoreError(
      sdkError('PermanentRedirect', 301, 'The bucket you are attempting to access must be addressed using the specified endpoint.'),
      'write',
      'b',
      'k',
      undefined,
    );
    expect(exitCodeFor(error)).toBe(2);
    expect(messageOf(error)).toMatch(/s3:\/\/b\/k.*PermanentRedirect.*AWS_REGION/);
  });

  it('maps expired credentials to exit 3 and no credentials at all to exit 2', () => {
    expect(
      exitCodeFor(objectStoreError(sdkError('ExpiredToken', 400, 'The provided token has expired.'), 'read', 'b', 'k', undefined)),
    ).toBe(3);
    const missing = Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' });
    const error = objectStoreError(missing, 'write', 'b', 'k', undefined);
    expect(exitCodeFor(error)).toBe(2);
    expect(messageOf(error)).toContain('AWS_ACCESS_KEY_ID');
  });

  it('maps throttling and 5xx to exit 4, and access denied on a read to exit 2', () => {
    expect(exitCodeFor(objectStoreError(sdkError('SlowDown', 503), 'write', 'b', 'k', 'http://minio:9000'))).toBe(4);
    expect(exitCodeFor(objectStoreError(sdkError('InternalError', 500), 'read', 'b', 'k', undefined))).toBe(4);
    expect(exitCodeFor(objectStoreError(sdkError('AccessDenied', 403, 'Access Denied'), 'read', 'b', 'k', undefined))).toBe(2);
    expect(exitCodeFor(objectStoreError(sdkError('AccessDenied', 403, 'Access Denied'), 'write', 'b', 'k', undefined))).toBe(7);
  });

  it("keeps the store's message to one short line", () => {
    const error = objectStoreError(sdkError('AccessDenied', 403, `line one\nline two ${'x'.repeat(500)}`), 'write', 'b', 'k', undefined);
    expect(messageOf(error)).not.toContain('\n');
    expect(messageOf(error).length).toBeLessThan(400);
  });

  it('returns a bug as it is, even one with a Node error code', () => {
    const bug = new TypeError('x is not a function');
    expect(objectStoreError(bug, 'write', 'b', 'k', undefined)).toBe(bug);
    const argument = Object.assign(new TypeError('The "chunk" argument must be of type string'), { code: 'ERR_INVALID_ARG_TYPE' });
    expect(objectStoreError(argument, 'write', 'b', 'k', undefined)).toBe(argument);
  });

  it('maps a missing region to a configuration error naming AWS_REGION, and a DNS failure to exit 4 with a hint', () => {
    expect(messageOf(objectStoreError(new Error('Region is missing'), 'read', 'b', 'k', undefined))).toMatch(
      /no AWS region configured; set AWS_REGION/,
    );
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND b.minio.internal'), { code: 'ENOTFOUND', $metadata: { attempts: 6 } });
    const error = objectStoreError(dns, 'read', 'b', 'k', 'http://minio.internal:9000');
    expect(exitCodeFor(error)).toBe(4);
    expect(messageOf(error)).toMatch(/after 6 attempts; check the endpoint and bucket name .*--s3-force-path-style/);
  });
});

describe('endpointFrom', () => {
  it('takes AWS_ENDPOINT_URL_S3 before AWS_ENDPOINT_URL, and refuses a malformed one or one with credentials', () => {
    expect(endpointFrom({ AWS_ENDPOINT_URL_S3: 'http://a:9000', AWS_ENDPOINT_URL: 'http://b' })).toBe('http://a:9000');
    expect(endpointFrom({ AWS_ENDPOINT_URL: 'http://b' })).toBe('http://b');
    expect(endpointFrom({ AWS_ENDPOINT_URL_S3: '' })).toBeUndefined();
    expect(() => endpointFrom({ AWS_ENDPOINT_URL_S3: 'minio:9000 ' })).toThrow(UsageError);
    expect(() => endpointFrom({ AWS_ENDPOINT_URL_S3: 'http://user:pw@minio:9000' })).toThrow(/must not carry credentials/);
  });
});
