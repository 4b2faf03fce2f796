import { Agent, EnvHttpProxyAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { createDispatcher, proxySettings } from '../../src/fetch/dispatcher.js';

describe('proxySettings', () => {
  it('reads a proxy without a scheme as http://, as curl does', () => {
    expect(proxySettings({ HTTP_PROXY: '127.0.0.1:3128' })).toEqual({ httpProxy: 'http://127.0.0.1:3128', httpsProxy: '', noProxy: '' });
    expect(proxySettings({ HTTPS_PROXY: 'user:p%40ss@proxy.example.com:8080' }).httpsProxy).toBe(
      'http://user:p%40ss@proxy.example.com:8080',
    );
    expect(proxySettings({ https_proxy: 'https://proxy.example.com' }).httpsProxy).toBe('https://proxy.example.com');
  });

  it('prefers the lower-case variable, skips empty ones, and passes NO_PROXY through', () => {
    expect(proxySettings({ http_proxy: 'low:1', HTTP_PROXY: 'up:2', NO_PROXY: 'localhost' })).toEqual({
      httpProxy: 'http://low:1',
      httpsProxy: '',
      noProxy: 'localhost',
    });
    expect(proxySettings({ http_proxy: '', HTTP_PROXY: 'up:2' }).httpProxy).toBe('http://up:2');
    expect(proxySettings({})).toEqual({ httpProxy: '', httpsProxy: '', noProxy: '' });
  });

  it.each([
    ['HTTP_PROXY', 'http://:3128'],
    ['https_proxy', ':::'],
    ['HTTPS_PROXY', 'ftp://user:hunter2-pass@proxy.example.com'],
  ])('refuses %s=%s as a usage error naming the variable, never its value', (name, value) => {
    let error: unknown;
    try {
      proxySettings({ [name]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(`${name} is not a proxy URL`);
    expect((error as Error).message).not.toContain(value);
  });

  it('is what createDispatcher reads: a broken variable fails before any request, a scheme-less one does not', async () => {
    expect(() => createDispatcher({ timeoutMs: 1000, env: { http_proxy: 'http://:1' } })).toThrow(/http_proxy is not a proxy URL/);
    await createDispatcher({ timeoutMs: 1000, env: { HTTP_PROXY: '127.0.0.1:3128' } }).close();
  });
});

describe('createDispatcher', () => {
  it("is undici's own agent, the class its index exports, loaded from its file alone when no proxy is set", async () => {
    const dispatcher = createDispatcher({ timeoutMs: 1000, env: { NO_PROXY: 'localhost' } });
    expect(dispatcher).toBeInstanceOf(Agent);
    expect(dispatcher).not.toBeInstanceOf(EnvHttpProxyAgent);
    await dispatcher.close();
  });

  it.each([{ HTTP_PROXY: '127.0.0.1:3128' }, { https_proxy: 'http://proxy.example.com:8080' }])(
    'is the proxy-aware agent when a proxy is set (%o)',
    async (env) => {
      const dispatcher = createDispatcher({ timeoutMs: 1000, env });
      expect(dispatcher).toBeInstanceOf(EnvHttpProxyAgent);
      await dispatcher.close();
    },
  );
});
