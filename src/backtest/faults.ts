import type { CalendarDay } from '../window/days.js';

/**
 * The faults a backtest can inject, as vendors break data: one store's day scaled (dark: every value zero), or every
 * store's (a half day: a batch on half its input).
 */
export const FAULTS = {
  dark: { factor: 0, wholeDay: false, words: 'one store gone dark (every value zero)' },
  tenth: { factor: 0.1, wholeDay: false, words: 'one store at a tenth' },
  'five-times': { factor: 5, wholeDay: false, words: 'one store at five times' },
  'half-day': { factor: 0.5, wholeDay: true, words: 'every store at half (a half day)' },
} as const;

export type FaultName = keyof typeof FAULTS;

export const FAULT_NAMES = Object.keys(FAULTS) as FaultName[];

/** Days of history before the first fault: four same weekdays, so the rule judges by weekday as it does in use. */
const FIRST_FAULT_AFTER = 28;
/** Days between faults: a prime, so the faults walk through the weekdays. */
const FAULT_EVERY = 11;

/** Whether a fault goes into the replay's n-th day (0 the first): the same days for the same span, every run. */
export function isFaultDay(index: number): boolean {
  return index >= FIRST_FAULT_AFTER && (index - FIRST_FAULT_AFTER) % FAULT_EVERY === 0;
}

/** One of `candidates` picked by the day alone (FNV-1a of its text), so the same data gives the same store. */
export function pickStore(day: CalendarDay, candidates: readonly string[]): string | undefined {
  let hash = 0x811c9dc5;
  for (let index = 0; index < day.length; index++) hash = Math.imul(hash ^ day.charCodeAt(index), 0x01000193) >>> 0;
  return candidates[hash % Math.max(1, candidates.length)];
}
