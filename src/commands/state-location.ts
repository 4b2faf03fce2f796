import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { STATE_FILE_NAME } from '../output/state.js';
import { text, valueOption } from './options.js';

/** Where `status`, `accept` and `reopen` find the state: an output folder's, or a file named outright. */
export const STATE_LOCATION_OPTIONS = {
  output: valueOption({ flags: '-o, --output <dir>', env: 'AREA_METRICS_OUTPUT', parse: text, default: './area-metrics-data', description: 'output folder whose state to use' }),
  state: valueOption({ flags: '--state <file>', parse: text, defaultText: '<output>/.area-metrics-state.json', description: 'state file to use' }),
};

export function statePathOf(options: { readonly output: string; readonly state: string | undefined }, command: string): string {
  if (options.state !== undefined) return options.state;
  if (options.output === '-') throw new UsageError(`${command} uses a folder's state; with -o - pass --state <file>`);
  return join(options.output, STATE_FILE_NAME);
}
