import { isObjectUrl, parseObjectUrl } from '../output/object-location.js';
import { IMPORT_OPTIONS, S3_FORCE_PATH_STYLE } from './import-options.js';
import { text, valueOption, type Parser } from './options.js';

/** A folder, or an `s3://bucket/prefix` checked now. */
const folderOrBucket: Parser<string> = (value, source) => {
  const checked = text(value, source);
  if (isObjectUrl(checked)) parseObjectUrl(checked, source);
  return checked;
};

/** Where `status`, `accept` and `reopen` find the state: an output folder's or bucket prefix's, or one named outright. */
export const STATE_LOCATION_OPTIONS = {
  output: valueOption({ flags: '-o, --output <dir|s3://bucket/prefix>', env: 'AREA_METRICS_OUTPUT', parse: folderOrBucket, default: './area-metrics-data', description: 'output folder, or bucket and prefix, whose state to use' }),
  state: valueOption({ flags: '--state <file|s3://bucket/key>', parse: IMPORT_OPTIONS.state.parse, defaultText: '<output>/.area-metrics-state.json', description: 'state file or object to use' }),
  s3ForcePathStyle: S3_FORCE_PATH_STYLE,
};
