import type { DayStanding } from '../output/run-manifest.js';
import type { ImportState } from '../state/import-state.js';
import { stateKey } from '../state/keys.js';
import type { CalendarDay } from '../window/days.js';

/**
 * What the state says of each day of a run, for the manifest: final (complete or accepted), or provisional with the
 * reason it is pending. Days final before the run are noted when it starts, so that a day the run made final says
 * so (`finalized`) even when its bytes did not change: a loader that reads only manifests knows when to trust it.
 */
export class DayFinality {
  private readonly finalBefore = new Set<string>();

  constructor(
    private readonly state: ImportState | undefined,
    private readonly storeCodes: readonly string[],
    days: readonly { readonly metric: { readonly name: string }; readonly day: CalendarDay }[],
  ) {
    for (const { metric, day } of days) {
      if (state?.isFinal(stateKey(metric.name, storeCodes), day)) this.finalBefore.add(`${metric.name} ${day}`);
    }
  }

  /** The day's standing now (when the run ends). */
  standing(metric: string, day: CalendarDay): DayStanding {
    const { state } = this;
    // Without a state (stdout without --state) nothing records a day final.
    if (state === undefined) return { status: 'provisional', reason: 'no-state' };
    const key = stateKey(metric, this.storeCodes);
    if (state.isFinal(key, day))
      return this.finalBefore.has(`${metric} ${day}`) ? { status: 'final' } : { status: 'final', finalized: true };
    if (state.isGivenUp(key, day)) return { status: 'provisional', reason: 'given-up' };
    const reason = state.pendingReason(key, day) ?? 'not-judged';
    // A held correction keeps the profile the day was final with.
    const correction = reason === 'suspect' && state.profileOf(key, day) !== undefined;
    return { status: 'provisional', reason, ...(correction ? { correction: true as const } : {}) };
  }
}
