/**
 * The format this release writes, and the one module the rest of the state reads it from: a new version changes
 * this file, not its readers.
 */
export { stateSchema, type LastRun, type PendingDay, type StateEntry, type StateFile } from './v4.js';
export { lastRunSchema } from './parts.js';

export const STATE_VERSION = 4;
