import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { addDays, type UtcDay } from '../window/days.js';
import { writeFileAtomic } from './atomic-file.js';

export const STATE_FILE_NAME = '.area-metrics-state.json';

const stateSchema = z.object({
  version: z.literal(1),
  /** Per metric (and store selection), the end of the contiguous run of complete days. */
  lastCompleteDay: z.record(z.string(), z.string().regex(/^\d{4}-\d{2}-\d{2}$/)),
});
type StateFile = z.infer<typeof stateSchema>;

/** `traffic`, or `traffic[store=A,B]` when a run is limited to stores, so partial runs never mark a day done. */
export function stateKey(metric: string, storeCodes: readonly string[]): string {
  return storeCodes.length === 0 ? metric : `${metric}[store=${[...storeCodes].sort().join(',')}]`;
}

/**
 * The record `--catch-up` resumes from. It only moves forward one day at a time: a day imported past a gap does not
 * move it, so the gap is still caught up later and no day is skipped silently.
 */
export class ImportState {
  private constructor(
    private readonly path: string,
    private readonly state: StateFile,
  ) {}

  static async load(path: string): Promise<ImportState> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new ImportState(path, { version: 1, lastCompleteDay: {} });
      throw new UsageError(`cannot read state file ${path}: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UsageError(`state file ${path} is not valid JSON; fix or delete it`);
    }
    const state = stateSchema.safeParse(parsed);
    if (!state.success) throw new UsageError(`state file ${path} is not an area-metrics state file; fix or delete it`);
    return new ImportState(path, state.data);
  }

  lastCompleteDay(key: string): UtcDay | undefined {
    return this.state.lastCompleteDay[key];
  }

  /** Records `day` as complete for `key` if it extends the contiguous run; returns whether the state changed. */
  async markComplete(key: string, day: UtcDay): Promise<boolean> {
    const last = this.state.lastCompleteDay[key];
    if (last !== undefined && addDays(last, 1) !== day) return false;
    this.state.lastCompleteDay[key] = day;
    await writeFileAtomic(this.path, [`${JSON.stringify(this.state, null, 2)}\n`]);
    return true;
  }
}
