import { z } from 'zod';
import type { V2File } from './v2.js';

/** Version 1 (the first releases): the last complete day of each key, nothing else. */
export const v1Schema = z.object({ version: z.literal(1).optional(), lastCompleteDay: z.record(z.string(), z.string()) });

export function upgradeV1(file: z.infer<typeof v1Schema>): V2File {
  return {
    version: 2,
    storeSets: {},
    metrics: Object.fromEntries(Object.entries(file.lastCompleteDay).map(([key, day]) => [key, { lastCompleteDay: day }])),
  };
}
