import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { isObjectUrl, objectKey, objectUrl, parseObjectUrl } from '../../src/output/object-location.js';

describe('parseObjectUrl', () => {
  it('splits s3://bucket/prefix, dropping trailing slashes', () => {
    expect(parseObjectUrl('s3://my-bucket/area/metrics/', '-o')).toEqual({ bucket: 'my-bucket', prefix: 'area/metrics' });
    expect(parseObjectUrl('s3://my.bucket', '-o')).toEqual({ bucket: 'my.bucket', prefix: '' });
    expect(parseObjectUrl('s3://my-bucket/', '-o')).toEqual({ bucket: 'my-bucket', prefix: '' });
  });

  it.each([
    ['s3://', /not a bucket name/],
    ['s3://My_Bucket/x', /not a bucket name/],
    ['s3://ab/x', /not a bucket name/],
    ['s3://bucket//x', /empty, "\." or "\.\." part/],
    ['s3://bucket/a/../b', /empty, "\." or "\.\." part/],
    ['s3://bucket/a\nb', /control character/],
    ['./data', /not an s3:\/\/bucket\/prefix URL/],
  ])('refuses %j as a usage error', (value, message) => {
    expect(() => parseObjectUrl(value, '-o')).toThrow(UsageError);
    expect(() => parseObjectUrl(value, '-o')).toThrow(message);
  });
});

describe('object names', () => {
  it('recognises the scheme in any case, and joins keys under the prefix', () => {
    expect(isObjectUrl('S3://b/p')).toBe(true);
    expect(isObjectUrl('./s3://x')).toBe(false);
    expect(objectKey({ bucket: 'b', prefix: 'p/q' }, 'traffic/2026-11-20.csv')).toBe('p/q/traffic/2026-11-20.csv');
    expect(objectKey({ bucket: 'b', prefix: '' }, 'traffic/2026-11-20.csv')).toBe('traffic/2026-11-20.csv');
    expect(objectUrl('b', 'p/traffic/x.csv')).toBe('s3://b/p/traffic/x.csv');
  });
});
