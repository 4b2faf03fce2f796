import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll } from 'vitest';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import { ObjectStore, type ObjectStoreConfig } from '../../src/output/object-store.js';
import { liveView } from './live-view.js';
import { useStarted } from './use-started.js';
import { COVERAGE_TABLE, isRunManifest } from './tmp.js';

/** The fake credentials s3rver accepts; a test that finds them in output has found a leak. */
export const S3_ACCESS_KEY_ID = 'S3RVER';
export const S3_SECRET_ACCESS_KEY = 'S3RVER-secret-key-for-tests';
export const S3_SESSION_TOKEN = 'S3RVER-session-token-for-tests';

/** One request the store received, as the front server saw it. */
export interface S3Request {
  readonly method: string;
  /** The object key (path after the bucket), decoded; '' for the bucket itself. */
  readonly key: string;
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
}

/** Switches a test flips to make the store misbehave; all off by default. */
export interface S3Faults {
  /** Every PUT is refused with 403 AccessDenied. */
  denyWrites: boolean;
  /**
   * Every request (or every one of these methods) is answered with this error: a wrong region, expired credentials,
   * a store throttling, a HEAD refused for want of s3:ListBucket...
   */
  answerAll: { readonly status: number; readonly code: string; readonly message: string; readonly methods?: readonly string[] } | undefined;
  /** Every connection is cut at once: a store that is down. */
  down: boolean;
  /** After this many PUTs of keys other than the state object have been stored, the store goes down. */
  downAfterDataPuts: number | undefined;
  /** Requests for the keys this matches are read and never answered, their connections left open: a frozen path. */
  frozen: RegExp | undefined;
  /**
   * The first conditional PUT of the state object (other than a probe) waits until this many have arrived (or 5 s passed),
   * so two runs that read the same version of the state are made to write it at the same moment.
   */
  gatherStatePuts: number;
  /** When false, the front server forwards conditional PUTs without checking them, like s3rver alone. */
  enforceConditions: boolean;
  /** Every conditional PUT is refused with 412, as if another writer changed the object each time. */
  refuseConditionalPuts: boolean;
  /**
   * PUTs with `If-None-Match` are answered 501 NotImplemented while `If-Match` is enforced: a store that implements
   * one condition and not the other.
   */
  unsupportedIfNoneMatch: boolean;
}

export interface S3Harness {
  /** The front server's URL (conditions enforced, faults applied): what the tool is pointed at. */
  readonly endpoint: string;
  readonly bucket: string;
  readonly faults: S3Faults;
  readonly requests: S3Request[];
  /** Env for a spawned CLI: endpoint, fake credentials, region, path-style, and no profile or instance role lookups. */
  env(extra?: Readonly<Record<string, string | undefined>>): Record<string, string | undefined>;
  /** A client for the test itself, talking to s3rver directly. */
  readonly client: S3Client;
  /**
   * Every object under `prefix` (keys relative to it) with its bytes, but the run manifests under `<prefix>/_runs/` and
   * the coverage table (as `listFiles` leaves them out).
   */
  objects(prefix?: string): Promise<Map<string, Buffer>>;
  /** An object's ETag and LastModified, or undefined. */
  head(key: string): Promise<{ etag: string; lastModified: number; metadata: Record<string, string> } | undefined>;
  /** The bytes of an object, or undefined. */
  read(key: string): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

export const STATE_OBJECT_NAME = '.area-metrics-state.json';

/** How the tool's own object store, in the test's process, reaches the harness: its front server, the fake keys, no retry. */
export function storeConfig(s3: Pick<S3Harness, 'endpoint'>, logger: Logger = silentLogger): ObjectStoreConfig {
  return {
    env: { AWS_ENDPOINT_URL_S3: s3.endpoint },
    forcePathStyle: true,
    retries: 0,
    timeoutMs: 5000,
    logger,
    credentials: { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET_ACCESS_KEY },
  };
}

/** The ETag the tool's probe of a store's conditions asks for. */
export const PROBE_ETAG = '"area-metrics-condition-probe"';

function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>test</RequestId></Error>`;
}

function answer(response: ServerResponse, status: number, code: string, message: string): void {
  const body = errorXml(code, message);
  response.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/**
 * s3rver (file-backed, in a temp folder, on loopback port 0) behind a small front server that does what s3rver does
 * not: it enforces `If-Match` / `If-None-Match` on PUT (checked and forwarded under a per-key lock, so the check and
 * the write are one step, as in a real store), it makes each object's replacement atomic for readers (one request
 * per key at a time), and it can refuse writes or go down on a test's command.
 */
/** The faults of a bucket that behaves: nothing denied, down or refused; conditions enforced. */
function noFaults(): S3Faults {
  return {
    denyWrites: false,
    answerAll: undefined,
    down: false,
    downAfterDataPuts: undefined,
    frozen: undefined,
    gatherStatePuts: 0,
    enforceConditions: true,
    refuseConditionalPuts: false,
    unsupportedIfNoneMatch: false,
  };
}

/** Between tests: the requests seen forgotten, every fault off. */
export function resetS3(s3: S3Harness): void {
  s3.requests.length = 0;
  Object.assign(s3.faults, noFaults());
}

/**
 * The bucket of a test file and an ObjectStore on it, started before its tests and closed after them (read or call
 * each, as `liveView` says).
 */
export function useS3Store(): { s3: S3Harness & (() => S3Harness); store: ObjectStore & (() => ObjectStore) } {
  let started: { s3: S3Harness; store: ObjectStore } | undefined;
  beforeAll(async () => {
    const s3 = await startS3();
    started = { s3, store: ObjectStore.create(s3.bucket, storeConfig(s3)) };
  });
  afterAll(async () => {
    started?.store.close();
    await started?.s3.close();
  });
  const current = () => {
    if (started === undefined) throw new Error('the bucket is started before the tests');
    return started;
  };
  return { s3: liveView(() => current().s3), store: liveView(() => current().store) };
}

export async function startS3(bucket = 'area-metrics-test'): Promise<S3Harness> {
  const directory = await mkdtemp(join(tmpdir(), 'area-metrics-s3rver-'));
  const staging = await mkdtemp(join(tmpdir(), 'area-metrics-s3rver-staging-'));
  const s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  // s3rver on its own answers a PUT before the object's bytes reach its file, which it rewrites in place, so a read
  // right after the answer can get an empty or cut-short object. A real store answers once the new object is whole and
  // swaps it in at once: the bytes are written to a file of their own and, once all are written, renamed over the object's.
  s3rver.store.putObject = async (object) => {
    const path = s3rver.store.getResourcePath(object.bucket, object.key, 'object');
    const written = join(staging, randomUUID());
    const md5 = createHash('md5');
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        md5.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    const content = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
    await pipeline(content, count, createWriteStream(written));
    await mkdir(dirname(path), { recursive: true });
    await rename(written, path);
    const digest = md5.digest('hex');
    await s3rver.store.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  };
  const { port: upstreamPort } = await s3rver.run();

  const faults = noFaults();
  const requests: S3Request[] = [];
  const keyLocks = new Map<string, Promise<void>>();
  let dataPuts = 0;
  let gathering: { count: number; release: () => void; released: Promise<void> } | undefined;

  const keyOf = (url: string | undefined): string => {
    const path = new URL(url ?? '/', 'http://x').pathname;
    const rest = path.slice(`/${bucket}`.length).replace(/^\//, '');
    return decodeURIComponent(rest);
  };

  const forward = (incoming: IncomingMessage, response: ServerResponse, body: Buffer): Promise<number> =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        { host: '127.0.0.1', port: upstreamPort, method: incoming.method, path: incoming.url, headers: incoming.headers },
        (upstream) => {
          response.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(response);
          upstream.on('end', () => resolve(upstream.statusCode ?? 502));
          upstream.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const currentEtag = async (incoming: IncomingMessage): Promise<string | undefined> => {
    const path = new URL(incoming.url ?? '/', 'http://x').pathname;
    const head = await fetch(`http://127.0.0.1:${upstreamPort}${path}`, { method: 'HEAD' });
    return head.status === 200 ? (head.headers.get('etag') ?? undefined) : undefined;
  };

  const withKeyLock = async <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const before = keyLocks.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    keyLocks.set(
      key,
      before.then(() => mine),
    );
    await before;
    try {
      return await work();
    } finally {
      done();
    }
  };

  const readBody = async (incoming: IncomingMessage): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const key = keyOf(incoming.url);
    const method = incoming.method ?? 'GET';
    const record = (status: number): void => void requests.push({ method, key, status, headers: incoming.headers });
    if (faults.down) {
      record(0);
      incoming.socket.destroy();
      return;
    }
    const body = await readBody(incoming);
    if (faults.frozen?.test(key)) {
      record(0);
      return;
    }
    if (faults.answerAll !== undefined && (faults.answerAll.methods?.includes(method) ?? true)) {
      record(faults.answerAll.status);
      answer(response, faults.answerAll.status, faults.answerAll.code, faults.answerAll.message);
      return;
    }
    if (method === 'PUT' && faults.denyWrites) {
      record(403);
      answer(response, 403, 'AccessDenied', 'Access Denied');
      return;
    }
    const ifMatch = incoming.headers['if-match'];
    const ifNoneMatch = incoming.headers['if-none-match'];
    if (method === 'PUT' && faults.unsupportedIfNoneMatch && ifNoneMatch !== undefined) {
      record(501);
      answer(response, 501, 'NotImplemented', 'A header you provided implies functionality that is not implemented');
      return;
    }
    if (method === 'PUT' && faults.enforceConditions && (ifMatch !== undefined || ifNoneMatch !== undefined)) {
      // The tool's first conditional write of a run is a probe of the store (against an ETag that cannot match): it
      // is let through, so the writes gathered are real read-merge-writes.
      if (key.endsWith(STATE_OBJECT_NAME) && faults.gatherStatePuts > 1 && ifMatch !== PROBE_ETAG) await gather(faults.gatherStatePuts);
      await withKeyLock(key, async () => {
        const etag = await currentEtag(incoming);
        const holds =
          !faults.refuseConditionalPuts &&
          (ifMatch !== undefined ? etag !== undefined && ifMatch === etag : !(ifNoneMatch === '*' && etag !== undefined));
        if (!holds) {
          record(412);
          answer(response, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
          return;
        }
        record(await forward(incoming, response, body));
      });
      return;
    }
    // s3rver writes an object's file in place, so a read during a write could see half of it; a real store swaps
    // the whole object at once. Requests for one key are taken one at a time to keep that promise here.
    const status = await withKeyLock(key, () => forward(incoming, response, body));
    record(status);
    if (method === 'PUT' && status < 300 && !key.endsWith(STATE_OBJECT_NAME)) {
      dataPuts++;
      if (faults.downAfterDataPuts !== undefined && dataPuts >= faults.downAfterDataPuts) faults.down = true;
    }
  };

  /** Holds the callers until `count` of them are waiting, or 5 s have passed; then lets them all go, once. */
  const gather = async (count: number): Promise<void> => {
    if (gathering === undefined) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      gathering = { count: 0, release, released };
      setTimeout(release, 5000).unref();
    }
    const group = gathering;
    group.count++;
    if (group.count >= count) group.release();
    await group.released;
    faults.gatherStatePuts = 0;
  };

  const sockets = new Set<Socket>();
  const front: Server = createServer((incoming, response) => {
    handle(incoming, response).catch(() => {
      if (!response.headersSent) answer(response, 500, 'InternalError', 'front server failed');
      else response.destroy();
    });
  });
  front.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;

  const client = new S3Client({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${upstreamPort}`,
    forcePathStyle: true,
    credentials: { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET_ACCESS_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

  const read = async (key: string): Promise<Buffer | undefined> => {
    try {
      const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await object.Body!.transformToByteArray());
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey') return undefined;
      throw error;
    }
  };

  return {
    endpoint,
    bucket,
    faults,
    requests,
    client,
    env: (extra = {}) => ({
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ENDPOINT_URL: undefined,
      AWS_ACCESS_KEY_ID: S3_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: S3_SECRET_ACCESS_KEY,
      AWS_SESSION_TOKEN: S3_SESSION_TOKEN,
      AWS_REGION: 'us-east-1',
      AWS_PROFILE: undefined,
      AWS_CONFIG_FILE: join(directory, 'no-aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(directory, 'no-aws-credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
      AREA_METRICS_S3_FORCE_PATH_STYLE: '1',
      ...extra,
    }),
    read,
    async objects(prefix = '') {
      const found = new Map<string, Buffer>();
      let token: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix === '' ? undefined : `${prefix}/`, ContinuationToken: token }),
        );
        for (const object of page.Contents ?? []) {
          const key = object.Key!;
          const relative = prefix === '' ? key : key.slice(prefix.length + 1);
          // Each run's manifest has a name of its own; the manifests' tests read them with `objects('<prefix>/_runs')`.
          if (!isRunManifest(relative) && relative !== COVERAGE_TABLE) found.set(relative, (await read(key))!);
        }
        token = page.NextContinuationToken;
      } while (token !== undefined);
      return new Map([...found].sort(([a], [b]) => (a < b ? -1 : 1)));
    },
    async head(key) {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { etag: head.ETag!, lastModified: head.LastModified!.getTime(), metadata: head.Metadata ?? {} };
      } catch (error) {
        if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
        throw error;
      }
    },
    async close() {
      client.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      await s3rver.close();
      await rm(directory, { recursive: true, force: true });
      await rm(staging, { recursive: true, force: true });
    },
  };
}

/** The bucket (s3rver) of a test file (or a describe block), started before its tests and closed after them. */
export function useS3(): S3Harness & (() => S3Harness) {
  return useStarted(
    'the bucket',
    () => startS3(),
    (s3) => s3.close(),
  );
}
