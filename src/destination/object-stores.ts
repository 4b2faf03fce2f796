import type { ObjectStore, ObjectStoreConfig } from '../output/object-store.js';

/**
 * The object stores of one command, one per bucket (data and state may live in different buckets), closed together
 * at the end. The AWS SDK is loaded only when an s3:// URL is used: a run into a folder never pays for it.
 */
export class ObjectStores {
  private readonly stores = new Map<string, ObjectStore>();

  constructor(private readonly config: ObjectStoreConfig) {}

  async get(bucket: string): Promise<ObjectStore> {
    let store = this.stores.get(bucket);
    if (store === undefined) {
      const { ObjectStore } = await import('../output/object-store.js');
      store = ObjectStore.create(bucket, this.config);
      this.stores.set(bucket, store);
    }
    return store;
  }

  /** Closes the SDK's connections, so the process is free to end. */
  close(): void {
    for (const store of this.stores.values()) store.close();
    this.stores.clear();
  }
}

/** The AWS credentials in the environment, so that no log or error line can show them, whatever a message quotes. */
export function awsCredentialsIn(env: NodeJS.ProcessEnv): { secret: string }[] {
  return ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_ACCESS_KEY_ID'].flatMap((name) => {
    const value = env[name];
    return value === undefined || value === '' ? [] : [{ secret: value }];
  });
}
