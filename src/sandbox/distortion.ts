import { formatDuration, type MetricResult } from './data.js';

/** The longest screen time the data contract admits (four-digit hours). */
const MAX_SCREEN_SECONDS = 9999 * 3600 + 59 * 60 + 59;

function screenSeconds(hhmmss: string): number {
  const [hours, minutes, seconds] = hhmmss.split(':').map(Number);
  return hours! * 3600 + minutes! * 60 + seconds!;
}

/**
 * A result as a vendor's broken batch publishes it: every value scaled by `factor` (0: all zero), still valid for the
 * data contract (whole users, a screen time of at most four-digit hours, traffic shares within 0..1), so only its
 * numbers give it away.
 */
export function distortResult(result: MetricResult, factor: number): MetricResult {
  const values = result.values.map((entry) => {
    if ('unique_users' in entry) return { ...entry, unique_users: Math.round(entry.unique_users * factor) };
    if ('avg_screen_time' in entry) {
      return { ...entry, avg_screen_time: formatDuration(Math.min(MAX_SCREEN_SECONDS, Math.round(screenSeconds(entry.avg_screen_time) * factor))) };
    }
    return { ...entry, traffic_pct: Math.min(1, Number(entry.traffic_pct) * factor).toFixed(5) };
  });
  return { ...result, values: values as MetricResult['values'] };
}
