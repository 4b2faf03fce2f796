import type { ObjectStore } from '../../output/object-store.js';
import type { StateStorage } from './storage.js';

/**
 * The state as one object (`<prefix>/.area-metrics-state.json` beside the data, or `--state s3://...`): read with its
 * ETag, replaced by a conditional PUT against it, and on a conflict read, merged and written again. Nothing on
 * local disk, so a run on a machine with no lasting disk (a CronJob, a scheduled task) picks up where the last one left.
 */
export class ObjectStateStorage implements StateStorage {
  constructor(
    private readonly store: ObjectStore,
    private readonly key: string,
  ) {}

  get location(): string {
    return this.store.url(this.key);
  }

  async read(): Promise<string | undefined> {
    return (await this.store.read(this.key))?.body.toString('utf8');
  }

  async update(change: (current: string | undefined) => string | undefined): Promise<void> {
    await this.store.update(this.key, (current) => {
      const next = change(current?.toString('utf8'));
      return next === undefined ? undefined : Buffer.from(next, 'utf8');
    });
  }
}
