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

  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}
