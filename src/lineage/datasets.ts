import { resolve } from 'node:path';
import { resourceUrl } from '../fetch/urls.js';
import { objectKey, type ObjectLocation } from '../output/object-location.js';
import type { DatasetName } from './events.js';

/** A vendor resource read by the run: the API's origin, and the resource's path (`/api/bi/area-metrics/traffic/`). */
export function apiDataset(baseUrl: URL, resource: string): DatasetName {
  return { namespace: baseUrl.origin, name: resourceUrl(baseUrl, resource).pathname };
}

/** A folder of the output on this machine, by its absolute path (OpenLineage's `file` namespace). */
export function folderDataset(outputDir: string, folder: string): DatasetName {
  return { namespace: 'file', name: resolve(outputDir, folder) };
}

/** A prefix of a bucket: namespace `s3://<bucket>`, name the key prefix. */
export function bucketDataset(location: ObjectLocation, folder: string): DatasetName {
  return { namespace: `s3://${location.bucket}`, name: objectKey(location, folder) };
}
