/** The part of s3rver's API (it ships no types) that the test harness uses. */
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    readonly port?: number;
    readonly address?: string;
    readonly silent?: boolean;
    readonly directory: string;
    readonly configureBuckets?: readonly { readonly name: string; readonly configs: readonly (string | Buffer)[] }[];
  }

  /** An object as s3rver's store takes it on PUT: the request's body stream and its headers. */
  interface StoredObjectInput {
    readonly bucket: string;
    readonly key: string;
    readonly content: NodeJS.ReadableStream | Buffer;
    readonly metadata: Record<string, string>;
  }

  /** s3rver's file-backed store, one file per object plus its MD5 and metadata beside it. */
  interface FilesystemStore {
    getResourcePath(bucket: string, key: string, resource: 'object'): string;
    putObject(object: StoredObjectInput): Promise<{ size: number; md5: string }>;
    putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    readonly store: FilesystemStore;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}
