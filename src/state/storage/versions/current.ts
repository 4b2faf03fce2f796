/**
 * The format this release writes, and the one module the rest of the state reads it from: a new version changes
 * this file, not its readers.
 */
export {
  stateSchema,
  type PendingDay,
  type StateEntry,
  type StateFile,
  type StoreFiguresDay,
} from './v5.js';
export type { LastRun } from './v4.js';
export { lastRunSchema } from './parts.js';

export const STATE_VERSION = 5;
