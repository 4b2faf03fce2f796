import { bucketDataset } from '../lineage/datasets.js';
import type { DatasetName } from '../lineage/events.js';
import { sha256Hex } from '../output/content-hash.js';
import { objectKey, type ObjectLocation } from '../output/object-location.js';
import { ObjectSink } from '../output/object-sink.js';
import { BucketManifests, NumberedManifests, type ManifestShelf } from '../output/run-manifest.js';
import { withoutEmptyUnits, type StoredFile, type UnitSink } from '../output/sinks.js';
import type { StaleTempFile } from '../output/stale-temp.js';
import type { DestinationCapabilities } from './capabilities.js';
import { PLAIN_DESTINATION, type Destination, type DestinationPlan } from './destination.js';
import { FOLDER_CAPABILITIES } from './folder.js';
import type { ObjectStores } from './object-stores.js';
import type { DestinationSpec } from './spec.js';
import { statePlace, type StatePlace } from './state-place.js';

/** What a bucket holds: what a folder does, its objects being files to every reader. */
export const BUCKET_CAPABILITIES: DestinationCapabilities = FOLDER_CAPABILITIES;

/** `-o s3://bucket/prefix`: an object per unit under the prefix (one PUT each), the manifests under its `_runs/`. */
export class BucketDestination implements Destination {
  readonly capabilities = BUCKET_CAPABILITIES;
  readonly claim = PLAIN_DESTINATION.claim;
  readonly close = PLAIN_DESTINATION.close;
  readonly rejectedPlace = PLAIN_DESTINATION.rejectedPlace;

  constructor(
    readonly spec: DestinationSpec,
    private readonly location: ObjectLocation,
    private readonly stores: ObjectStores,
  ) {}

  /** Nothing to check ahead: reading the state is the first call to the store, and fails as early. */
  prepare(): Promise<readonly StaleTempFile[]> {
    return Promise.resolve([]);
  }

  async sink(plan: DestinationPlan): Promise<UnitSink> {
    return withoutEmptyUnits(new ObjectSink(await this.stores.get(this.location.bucket), this.location, plan.encoding, plan.layout));
  }

  async manifests(): Promise<ManifestShelf> {
    return new NumberedManifests(new BucketManifests(await this.stores.get(this.location.bucket), this.location));
  }

  async storedFile(path: string): Promise<StoredFile | undefined> {
    const stored = await (await this.stores.get(this.location.bucket)).read(objectKey(this.location, path));
    return stored === undefined ? undefined : { path, bytes: stored.body.length, sha256: sha256Hex(stored.body) };
  }

  dataset(folder: string): DatasetName {
    return bucketDataset(this.location, folder);
  }

  statePlace(state: string | undefined): StatePlace | undefined {
    return statePlace(this.spec, state);
  }
}
