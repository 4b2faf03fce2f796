import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseLineageUrl, resolveLineageSettings } from '../../src/lineage/settings.js';

const url = (text: string) => parseLineageUrl(text, 'OPENLINEAGE_URL');

describe('lineage settings, as the OpenLineage clients read their environment', () => {
  it('posts to <url>/api/v1/lineage, under a path the URL has, in namespace area-metrics by default', () => {
    expect(resolveLineageSettings(url('http://marquez:5000'), {})).toEqual({
      endpoint: new URL('http://marquez:5000/api/v1/lineage'),
      namespace: 'area-metrics',
    });
    expect(resolveLineageSettings(url('https://lineage.example.com/gateway/'), {})?.endpoint.href).toBe(
      'https://lineage.example.com/gateway/api/v1/lineage',
    );
    expect(resolveLineageSettings(url('https://lineage.example.com/gateway'), {})?.endpoint.href).toBe(
      'https://lineage.example.com/gateway/api/v1/lineage',
    );
  });

  it('takes OPENLINEAGE_ENDPOINT, OPENLINEAGE_API_KEY and OPENLINEAGE_NAMESPACE; OPENLINEAGE_DISABLED=true turns it off', () => {
    const settings = resolveLineageSettings(url('http://marquez:5000'), {
      endpoint: '/events/v2',
      apiKey: 'key-123',
      namespace: 'nightly',
    });
    expect(settings).toEqual({ endpoint: new URL('http://marquez:5000/events/v2'), apiKey: 'key-123', namespace: 'nightly' });
    expect(resolveLineageSettings(url('http://marquez:5000'), { disabled: ' TRUE ' })).toBeUndefined();
    expect(resolveLineageSettings(url('http://marquez:5000'), { disabled: 'false' })).toEqual({
      endpoint: new URL('http://marquez:5000/api/v1/lineage'),
      namespace: 'area-metrics',
    });
    expect(resolveLineageSettings(undefined, { apiKey: 'key-123' })).toBeUndefined();
  });

  it('refuses what is not an http(s) URL, credentials in it, and an endpoint on another host, without echoing a password', () => {
    expect(() => url('marquez:5000')).toThrow(/must be http or https/);
    expect(() => url('not a url')).toThrow(UsageError);
    expect(() => url('http://user:Pa55word@marquez:5000')).toThrow(/must not contain credentials; put the API key in OPENLINEAGE_API_KEY/);
    try {
      url('http://user:Pa55word@marquez:5000');
    } catch (error) {
      expect((error as Error).message).not.toContain('Pa55word');
    }
    expect(() => resolveLineageSettings(url('http://marquez:5000'), { endpoint: 'http://elsewhere/api' })).toThrow(
      /OPENLINEAGE_ENDPOINT must be a path under/,
    );
  });
});
