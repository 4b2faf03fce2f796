import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import { messageOf } from '../../errors.js';
import { withSecretReread, type BrokerConfig } from './config.js';
import type { LiveConfig } from './live-config.js';

/** Writers replace a file in several steps: it is read once they are done. */
const SETTLE_MS = 100;

/**
 * Reads a rotated secret file again when it changes, and publishes the config holding the new secret. Each secret
 * file's folder is watched, not the file: Kubernetes replaces a mounted secret by swapping a `..data` link in the
 * folder, which a watch on the old file never sees. The folders follow the config (a reload may name others).
 */
export class SecretWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private rereadTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly live: LiveConfig,
    private readonly warn: (message: string, fields: Record<string, unknown>) => void,
  ) {
    live.onChange((next) => this.watchFoldersOf(next));
    this.watchFoldersOf(live.current);
  }

  /** The config with every secret file read again, published when a secret changed. */
  reread(): void {
    const current = this.live.current;
    let next = current;
    for (const name of next.platforms.keys()) next = withSecretReread(next, name);
    if (next !== current) this.live.publish(next, 'a secret file changed');
  }

  /**
   * One platform's secret file read again after the auth server refused its secret (it may have been rotated before
   * the watch fired): the config holding the new secret, published, or undefined when the secret did not change.
   */
  rereadPlatform(platform: string): BrokerConfig | undefined {
    const current = this.live.current;
    const renewed = withSecretReread(current, platform);
    if (renewed === current) return undefined;
    this.live.publish(renewed, `the secret file of platform ${platform} changed`);
    return renewed;
  }

  close(): void {
    clearTimeout(this.rereadTimer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private watchFoldersOf(config: BrokerConfig): void {
    const folders = new Set<string>();
    for (const platform of config.platforms.values())
      if (platform.clientSecretFile !== undefined) folders.add(dirname(platform.clientSecretFile));
    for (const [folder, watcher] of this.watchers) {
      if (!folders.has(folder)) {
        watcher.close();
        this.watchers.delete(folder);
      }
    }
    for (const folder of folders) if (!this.watchers.has(folder)) this.watch(folder);
  }

  private watch(folder: string): void {
    try {
      const watcher = watch(folder, { persistent: false }, () => {
        clearTimeout(this.rereadTimer);
        this.rereadTimer = setTimeout(() => this.reread(), SETTLE_MS);
        this.rereadTimer.unref();
      });
      watcher.on('error', () => watcher.close());
      this.watchers.set(folder, watcher);
    } catch (error) {
      this.warn("cannot watch a secret file's folder; the secret is read again when the auth server refuses it", {
        reason: messageOf(error),
      });
    }
  }
}
