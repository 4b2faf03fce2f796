import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { OutputError, UsageError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { sha256Hex } from './content-hash.js';
import { objectUrl } from './object-location.js';
import { objectStoreError, statusOf, type ObjectAction } from './object-store-errors.js';

/**
 * How the tool reaches an S3-compatible store; the credentials come from `env`'s AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, else from the SDK's default chain, unless given.
 */
export interface ObjectStoreConfig {
  /**
   * The run's environment: `AWS_REGION`, the endpoint variables and the access key are read from it. The rest of the
   * SDK's chain (profiles, roles) reads the process's own.
   */
  readonly env: NodeJS.ProcessEnv;
  /** Path-style addressing (`http://host/bucket/key`), which most S3-compatible stores need. */
  readonly forcePathStyle: boolean;
  /** Retries per request on network errors, timeouts, throttling and 5xx. */
  readonly retries: number;
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** Fixed credentials instead of the default chain (tests, embedding). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string };
}

/** An object as read: its bytes and its ETag (the version a conditional write is made against). */
export interface StoredObject {
  readonly body: Buffer;
  readonly etag: string | undefined;
}

/** What a write did: `unchanged` when the object already held these bytes and was left as it was. */
export type WriteOutcome = 'written' | 'unchanged';

/** The user metadata key holding the SHA-256 of an object's bytes, so an unchanged object is not written again. */
export const CONTENT_HASH_METADATA = 'area-metrics-sha256';

/** An ETag no store gives out: a conditional write against it must fail where conditions are enforced. */
const PROBE_ETAG = '"area-metrics-condition-probe"';

/** Read-merge-write attempts before giving up on a state that other runs keep changing. */
const UPDATE_ATTEMPTS = 10;

function nonEmpty(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The endpoint override the SDK's own convention names (a store other than AWS), checked; undefined for AWS. */
export function endpointFrom(env: NodeJS.ProcessEnv): string | undefined {
  for (const name of ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL']) {
    const value = nonEmpty(env, name);
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new UsageError(`${name} ${JSON.stringify(value)} is not a URL; write it as https://host[:port]`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${name} must be an http:// or https:// URL`);
    if (url.username !== '' || url.password !== '')
      throw new UsageError(`${name} must not carry credentials; use the AWS credential variables`);
    return value;
  }
  return undefined;
}

type AccessKey = NonNullable<ObjectStoreConfig['credentials']>;

/**
 * The first link of the SDK's default chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), read
 * from the run's environment rather than the process's, so a command run with an environment of its own (embedded,
 * in-process) uses that one; undefined leaves the SDK to walk its chain.
 */
export function accessKeyFrom(env: NodeJS.ProcessEnv): AccessKey | undefined {
  const accessKeyId = nonEmpty(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = nonEmpty(env, 'AWS_SECRET_ACCESS_KEY');
  if (accessKeyId === undefined || secretAccessKey === undefined) return undefined;
  const sessionToken = nonEmpty(env, 'AWS_SESSION_TOKEN');
  return { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) };
}

/**
 * An S3 client with the conventions SDK users already have (default credential chain, `AWS_REGION`,
 * `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`), and what S3-compatible stores accept: checksums only where an
 * operation requires one (many stores refuse the newer trailing checksums), path-style addressing when asked.
 */
export function createObjectClient(config: ObjectStoreConfig): S3Client {
  const endpoint = endpointFrom(config.env);
  // A store other than AWS often has no region at all; SigV4 still needs a name, and us-east-1 is the one they accept.
  const region = nonEmpty(config.env, 'AWS_REGION') ?? nonEmpty(config.env, 'AWS_DEFAULT_REGION') ?? (endpoint ? 'us-east-1' : undefined);
  const credentials = config.credentials ?? accessKeyFrom(config.env);
  const sdkLogger = {
    trace: () => {},
    debug: () => {},
    info: () => {},
    warn: (...parts: unknown[]) => config.logger.warn(`AWS SDK: ${parts.map(String).join(' ')}`),
    error: (...parts: unknown[]) => config.logger.debug(`AWS SDK: ${parts.map(String).join(' ')}`),
  };
  return new S3Client({
    ...(region === undefined ? {} : { region }),
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(credentials === undefined ? {} : { credentials }),
    forcePathStyle: config.forcePathStyle,
    maxAttempts: config.retries + 1,
    retryMode: 'standard',
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // --timeout bounds a connection and each silence of a request (socketTimeout): a frozen path fails the request,
    // which is retried, and the run stops. The SDK's requestTimeout only warns unless told to throw, and bounds the
    // whole request, which a large upload on a slow link may rightly outlast.
    requestHandler: { connectionTimeout: config.timeoutMs, socketTimeout: config.timeoutMs },
    logger: sdkLogger,
  });
}

/**
 * One bucket of an S3-compatible store. Every write is one PUT of the whole object (a Buffer body, so no streaming
 * chunk encoding): a reader sees the old object or the new one, never half, and a failed write leaves the old one.
 */
export class ObjectStore {
  /** Whether the store honours `If-Match`; found out by the first conditional write. */
  private conditions: 'unknown' | 'enforced' | 'ignored' = 'unknown';

  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
    private readonly logger: Logger,
    /** The endpoint override, for messages; undefined for AWS. */
    readonly endpoint: string | undefined,
  ) {}

  static create(bucket: string, config: ObjectStoreConfig): ObjectStore {
    return new ObjectStore(createObjectClient(config), bucket, config.logger, endpointFrom(config.env));
  }

  url(key: string): string {
    return objectUrl(this.bucket, key);
  }

  /** The object's bytes and ETag; undefined when there is no such key. */
  async read(key: string, signal?: AbortSignal): Promise<StoredObject | undefined> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
      const body = answer.Body === undefined ? Buffer.alloc(0) : Buffer.from(await answer.Body.transformToByteArray());
      return { body, etag: answer.ETag };
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey') return undefined;
      throw this.failure(error, 'read', key, signal);
    }
  }

  /**
   * Writes `body` at `key` unless the object there already holds these bytes (the SHA-256 kept in its metadata), so
   * a re-run rewrites nothing. A look that fails (no s3:ListBucket makes a missing key answer 403) just means "write".
   * `hash` is the body's SHA-256 when the caller has it already.
   */
  async writeIfChanged(key: string, body: Uint8Array, signal?: AbortSignal, hash = sha256Hex(body)): Promise<WriteOutcome> {
    if ((await this.storedHash(key, signal)) === hash) return 'unchanged';
    await this.put(
      { Key: key, Body: Buffer.from(body.buffer, body.byteOffset, body.byteLength), Metadata: { [CONTENT_HASH_METADATA]: hash } },
      signal,
    );
    return 'written';
  }

  /**
   * Removes the object if there is one (looking first, so a run with nothing to remove needs no delete right). A look
   * the store refuses (403: no s3:ListBucket, so a missing key cannot be told from a forbidden one) leaves it be.
   */
  async removeIfPresent(key: string, signal?: AbortSignal): Promise<boolean> {
    const present = await this.exists(key, signal);
    if (present === 'unknown') this.logger.debug(`cannot tell whether ${this.url(key)} exists (403); left as it is`);
    if (present !== 'yes') return false;
    await this.remove(key, signal);
    return true;
  }

  /** The keys under `prefix` (a `/`-ended folder-like prefix), every page of the listing, in the store's order. */
  async listKeys(prefix: string, signal?: AbortSignal): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      try {
        const page = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(token === undefined ? {} : { ContinuationToken: token }) }),
          { abortSignal: signal },
        );
        for (const item of page.Contents ?? []) if (item.Key !== undefined) keys.push(item.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } catch (error) {
        throw this.failure(error, 'read', prefix, signal);
      }
    } while (token !== undefined);
    return keys;
  }

  /** Removes an object known to be there (a store answers a missing key's delete as done, too). */
  async remove(key: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
    } catch (error) {
      throw this.failure(error, 'remove', key, signal);
    }
  }

  /**
   * Read-merge-write of one object: `change` gets the current bytes (undefined when there are none) and returns the
   * new bytes, or undefined to leave it. The write is conditional on the version read (`If-Match` on its ETag, or
   * `If-None-Match: *` when there was none), so a run that changed it meanwhile is never overwritten: its change is
   * read again and merged. Where the store ignores conditions, a warning says so once and the write is plain.
   * Returns whether it wrote.
   */
  async update(key: string, change: (current: Buffer | undefined) => Uint8Array | undefined, signal?: AbortSignal): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.read(key, signal);
      const next = change(current?.body);
      if (next === undefined) return false;
      if (await this.writeConditionally(key, next, current?.etag, signal)) return true;
      if (attempt >= UPDATE_ATTEMPTS) {
        throw new OutputError(`cannot update ${this.url(key)}: other runs changed it ${attempt} times while this one tried; run again`);
      }
      this.logger.debug(`${this.url(key)} changed since it was read (another run); reading it again`);
      // Jittered, so two runs that collided do not collide again in step.
      await sleep(10 + Math.floor(Math.random() * 40 * attempt), undefined, { signal }).catch((error: unknown) => {
        throw signal?.aborted ? (signal.reason as unknown) : error;
      });
    }
  }

  /**
   * Creates the object unless one exists at `key` (`If-None-Match: *`): false when another writer's object is there,
   * nothing written. The store decides, so of two writers racing for one key exactly one gets it. A 409 (another
   * conditional write of the key still in flight) is waited out rather than taken for "exists": that write may yet
   * fail. An object already holding exactly these bytes is this write's own (an SDK retry of a PUT that had landed).
   * A store that does not implement the condition (501) is written plainly, with the warning `update` gives.
   */
  async createIfAbsent(key: string, body: Uint8Array, signal?: AbortSignal): Promise<boolean> {
    const input = {
      Key: key,
      Body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      ContentType: 'application/json',
      Metadata: { [CONTENT_HASH_METADATA]: sha256Hex(body) },
    };
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.putUnless({ ...input, IfNoneMatch: '*' }, signal, 'conflict');
      if (outcome === 'written') return true;
      if (outcome === 'unsupported') {
        this.ignoreConditions(key, 'If-None-Match');
        await this.put(input, signal);
        return true;
      }
      if (outcome === 'refused') return (await this.read(key, signal))?.body.equals(input.Body) === true;
      if (attempt >= UPDATE_ATTEMPTS)
        throw new OutputError(`cannot create ${this.url(key)}: another write of it stayed in flight; run again`);
      await sleep(10 + Math.floor(Math.random() * 40 * attempt), undefined, { signal }).catch((error: unknown) => {
        throw signal?.aborted ? (signal.reason as unknown) : error;
      });
    }
  }

  /** Writes `body` if the object is still the version `etag` names (absent when undefined); false if it is not. */
  private async writeConditionally(
    key: string,
    body: Uint8Array,
    etag: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const input = { Key: key, Body: Buffer.from(body.buffer, body.byteOffset, body.byteLength), ContentType: 'application/json' };
    if (this.conditions === 'unknown') {
      // The first conditional write of a run asks with a version that cannot match: a store that enforces
      // conditions refuses it, one that ignores them writes (the bytes this run meant to write anyway).
      const probe = await this.putUnless({ ...input, IfMatch: PROBE_ETAG }, signal);
      if (probe === 'refused') {
        this.conditions = 'enforced';
      } else {
        this.ignoreConditions(key, 'If-Match');
        if (probe === 'written') return true;
      }
    }
    if (this.conditions === 'enforced') {
      const written = await this.putUnless(etag === undefined ? { ...input, IfNoneMatch: '*' } : { ...input, IfMatch: etag }, signal);
      // A store can enforce one condition and not implement the other (`If-None-Match`): that is no conflict, and no
      // number of attempts would change the answer, so it is written the way a store without conditions is.
      if (written !== 'unsupported') return written === 'written';
      this.ignoreConditions(key, etag === undefined ? 'If-None-Match' : 'If-Match');
    }
    await this.put(input, signal);
    return true;
  }

  /** From now on this store's writes are plain, with one warning saying what that risks. */
  private ignoreConditions(key: string, header: 'If-Match' | 'If-None-Match'): void {
    this.conditions = 'ignored';
    this.logger.warn(
      `the object store ignores conditional writes (${header}), so two runs updating ${this.url(key)} at the same time ` +
        `could lose one run's days; run one import at a time into this prefix`,
      { bucket: this.bucket, key },
    );
  }

  /**
   * A conditional PUT: `refused` when the condition does not hold (412; 404 for `If-Match` on a key that is gone),
   * `inFlight` for a 409 (a conflicting write in flight: a read-merge-write reads again, a create waits for it),
   * `unsupported` when the store says it does not implement conditions.
   */
  private async putUnless(
    input: Omit<PutObjectCommandInput, 'Bucket'>,
    signal: AbortSignal | undefined,
    inFlight: 'refused' | 'conflict' = 'refused',
  ): Promise<'written' | 'refused' | 'conflict' | 'unsupported'> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, ...input }), { abortSignal: signal });
      return 'written';
    } catch (error) {
      const status = statusOf(error);
      if (status === 409) return inFlight;
      if (status === 412 || (status === 404 && (error as Error).name === 'NoSuchKey')) return 'refused';
      if (status === 501) return 'unsupported';
      throw this.failure(error, 'write', input.Key ?? '', signal);
    }
  }

  private async put(input: Omit<PutObjectCommandInput, 'Bucket'>, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, ...input }), { abortSignal: signal });
    } catch (error) {
      throw this.failure(error, 'write', input.Key ?? '', signal);
    }
  }

  private async storedHash(key: string, signal: AbortSignal | undefined): Promise<string | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
      return head.Metadata?.[CONTENT_HASH_METADATA];
    } catch (error) {
      const status = statusOf(error);
      if (status === 404 || status === 403) return undefined;
      throw this.failure(error, 'read', key, signal);
    }
  }

  private async exists(key: string, signal: AbortSignal | undefined): Promise<'yes' | 'no' | 'unknown'> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
      return 'yes';
    } catch (error) {
      const status = statusOf(error);
      if (status === 404) return 'no';
      if (status === 403) return 'unknown';
      throw this.failure(error, 'read', key, signal);
    }
  }

  /** The typed error for a failed operation; the interrupt itself when the run was stopped. */
  private failure(error: unknown, action: ObjectAction, key: string, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason;
    return objectStoreError(error, action, this.bucket, key, this.endpoint);
  }

  /** Closes the client's connections so the process can end. */
  close(): void {
    this.client.destroy();
  }
}
