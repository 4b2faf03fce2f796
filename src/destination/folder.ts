import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode } from '../errors.js';
import { folderDataset } from '../lineage/datasets.js';
import type { DatasetName } from '../lineage/events.js';
import { checkWritableFolder } from '../output/atomic-file.js';
import { tempFileFolders } from '../output/layout.js';
import { FolderManifests, NumberedManifests, RUNS_FOLDER, type ManifestShelf } from '../output/run-manifest.js';
import { sha256Hex } from '../output/content-hash.js';
import { FileSink, withoutEmptyUnits, type StoredFile, type UnitSink } from '../output/sinks.js';
import { asOutputError } from '../output/write-failure.js';
import { removeStaleTempFiles, type StaleTempFile } from '../output/stale-temp.js';
import type { DestinationCapabilities } from './capabilities.js';
import { PLAIN_DESTINATION, type Destination, type DestinationPlan } from './destination.js';
import type { DestinationSpec } from './spec.js';
import { statePlace, type StatePlace } from './state-place.js';

/**
 * What a folder holds: files of any format and shape, laid out by `--layout`; its state beside them (or where
 * `--state` says), which keeps the day mode, layout and format of its first run, so one folder holds one kind of file.
 */
export const FOLDER_CAPABILITIES: DestinationCapabilities = {
  files: true,
  formats: ['csv', 'ndjson', 'parquet'],
  defaultFormat: 'csv',
  shapes: ['rows', 'results'],
  state: 'beside-data',
  keeps: ['mode', 'layout', 'format'],
  sharedHeader: false,
  commitsAhead: false,
  oneRunAtATime: false,
  refusals: {},
};

/** `-o <dir>`: a file per unit under the folder (atomic writes), the manifests in its `_runs/`. */
export class FolderDestination implements Destination {
  readonly capabilities = FOLDER_CAPABILITIES;
  readonly claim = PLAIN_DESTINATION.claim;
  readonly close = PLAIN_DESTINATION.close;
  readonly rejectedPlace = PLAIN_DESTINATION.rejectedPlace;

  constructor(
    readonly spec: DestinationSpec,
    private readonly dir: string,
  ) {}

  async prepare(plan: DestinationPlan): Promise<readonly StaleTempFile[]> {
    await checkWritableFolder(this.dir);
    // Where a killed run's temp files can be: the folder itself (the state), the data's, the manifests'.
    const folders = [
      this.dir,
      ...tempFileFolders(plan.metrics, plan.units, plan.layout).map((folder) => join(this.dir, folder)),
      join(this.dir, RUNS_FOLDER),
    ];
    return removeStaleTempFiles(folders);
  }

  sink(plan: DestinationPlan): Promise<UnitSink> {
    return Promise.resolve(withoutEmptyUnits(new FileSink(this.dir, plan.encoding, plan.layout)));
  }

  manifests(): Promise<ManifestShelf> {
    return Promise.resolve(new NumberedManifests(new FolderManifests(this.dir)));
  }

  async storedFile(path: string): Promise<StoredFile | undefined> {
    let bytes: Buffer;
    try {
      bytes = await readFile(join(this.dir, path));
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw asOutputError(error, `cannot read ${join(this.dir, path)}`);
    }
    return { path, bytes: bytes.length, sha256: sha256Hex(bytes) };
  }

  dataset(folder: string): DatasetName {
    return folderDataset(this.dir, folder);
  }

  statePlace(state: string | undefined): StatePlace | undefined {
    return statePlace(this.spec, state);
  }
}
