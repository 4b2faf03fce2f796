import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { firstPageUrl, parseBaseUrl, rebaseOntoOrigin, resourceUrl } from '../../src/fetch/urls.js';

describe('resourceUrl', () => {
  it.each([
    ['https://api.example.com', 'https://api.example.com/api/bi/area-metrics/traffic/'],
    ['https://api.example.com/', 'https://api.example.com/api/bi/area-metrics/traffic/'],
    ['https://api.example.com/api', 'https://api.example.com/api/bi/area-metrics/traffic/'],
    ['https://api.example.com/api/', 'https://api.example.com/api/bi/area-metrics/traffic/'],
    ['https://api.example.com/vendor//', 'https://api.example.com/vendor/api/bi/area-metrics/traffic/'],
    ['https://api.example.com/vendor/api', 'https://api.example.com/vendor/api/bi/area-metrics/traffic/'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080/api/bi/area-metrics/traffic/'],
  ])('%s → %s', (base, expected) => {
    expect(resourceUrl(parseBaseUrl(base), 'traffic').href).toBe(expected);
  });
});

describe('firstPageUrl', () => {
  it('URL-encodes the UTC filters and carries store and page size', () => {
    const url = firstPageUrl(parseBaseUrl('https://api.example.com'), 'unique-users', {
      gte: '2026-11-20T00:00:00Z',
      lte: '2026-11-20T23:59:59Z',
      storeCode: 'A&B 1',
      pageSize: 500,
    });
    expect(url.search).toBe(
      '?datetime_gte=2026-11-20T00%3A00%3A00Z&datetime_lte=2026-11-20T23%3A59%3A59Z&store_code=A%26B+1&page_size=500',
    );
    expect(url.searchParams.get('store_code')).toBe('A&B 1');
  });
});

describe('parseBaseUrl', () => {
  it.each([
    ['not a url', /is not a URL/],
    ['ftp://example.com', /http or https/],
    ['https://user:pass@example.com', /must not contain credentials/],
    ['https://example.com/?x=1', /query or fragment/],
  ])('rejects %s', (value, message) => {
    expect(() => parseBaseUrl(value)).toThrow(UsageError);
    expect(() => parseBaseUrl(value)).toThrow(message);
  });

  it('never echoes credentials embedded in a rejected URL', () => {
    expect(() => parseBaseUrl('https://user:s3cr3t-value@example.com')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('s3cr3t-value') }),
    );
  });
});

describe('rebaseOntoOrigin', () => {
  const base = parseBaseUrl('https://api.example.com/api');

  it('keeps a link on the same origin', () => {
    const link = 'https://api.example.com/api/bi/area-metrics/traffic/?page=2&page_size=7';
    expect(rebaseOntoOrigin(link, base)).toEqual({ url: new URL(link), rebased: false });
  });

  it('moves a link on another scheme or host onto the base origin, keeping path and query', () => {
    const { url, rebased } = rebaseOntoOrigin('http://internal:8000/api/bi/area-metrics/traffic/?page=2&page_size=7', base);
    expect(rebased).toBe(true);
    expect(url.href).toBe('https://api.example.com/api/bi/area-metrics/traffic/?page=2&page_size=7');
  });
});
