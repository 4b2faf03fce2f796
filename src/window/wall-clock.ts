/**
 * The time of day a command reads: which days are over, and the stamps of what it leaves (manifests, the state's
 * last run, lineage events). Every such read goes through the one clock the command was given, so a test that sets
 * it (`AREA_METRICS_NOW`) sees the whole run on it. Durations are measured apart, with `performance.now()`.
 */
export type WallClock = () => Date;

export const systemWallClock: WallClock = () => new Date();

/** A clock that stands still at `instant`: every read is that instant. */
export function frozenClock(instant: Date): WallClock {
  const ms = instant.getTime();
  return () => new Date(ms);
}
