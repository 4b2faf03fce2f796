import { UsageError } from '../errors.js';

/** A bucket and a key prefix in an S3-compatible store: where `-o s3://bucket/prefix` writes. */
export interface ObjectLocation {
  readonly bucket: string;
  /** Without a leading or trailing `/`; empty for the bucket's root. */
  readonly prefix: string;
}

const SCHEME = 's3://';

/** Whether an `-o` or `--state` value names an object store rather than a folder. */
export function isObjectUrl(value: string): boolean {
  return value.toLowerCase().startsWith(SCHEME);
}

/**
 * Bucket names as S3-compatible stores accept them: 3 to 63 lower-case letters, digits, dots and hyphens (an
 * underscore too, which older stores allow), starting and ending with a letter or digit.
 */
const BUCKET = /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/;

/**
 * `s3://bucket/prefix` as a bucket and a prefix. A prefix with an empty, `.` or `..` segment (`a//b`, `a/../b`) is
 * almost always a typing mistake that some stores would keep literally and others normalise, so it is refused.
 */
export function parseObjectUrl(value: string, flag: string): ObjectLocation {
  if (!isObjectUrl(value)) throw new UsageError(`${flag} ${JSON.stringify(value)} is not an s3://bucket/prefix URL`);
  const rest = value.slice(SCHEME.length);
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = (slash < 0 ? '' : rest.slice(slash + 1)).replace(/\/+$/, '');
  if (!BUCKET.test(bucket)) {
    throw new UsageError(
      `${flag} ${JSON.stringify(value)}: ${JSON.stringify(bucket)} is not a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)`,
    );
  }
  if (prefix !== '' && prefix.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: the prefix has an empty, "." or ".." part; write it as a/b/c`);
  }
  if ([...prefix].some((char) => char < ' ' || char === '\u007f'))
    throw new UsageError(`${flag} ${JSON.stringify(value)}: the prefix has a control character`);
  return { bucket, prefix };
}

/** The key of `relativePath` (`traffic/2026-11-20.csv`) under the location's prefix. */
export function objectKey(location: ObjectLocation, relativePath: string): string {
  return location.prefix === '' ? relativePath : `${location.prefix}/${relativePath}`;
}

/** `s3://bucket/key`, for messages and logs. */
export function objectUrl(bucket: string, key: string): string {
  return `${SCHEME}${bucket}/${key}`;
}
