import type { DayMode } from '../../window/day-mode.js';
import type { CalendarDay } from '../../window/days.js';
import { resultsOf } from '../../output/read-back.js';
import type { StoredUnits } from '../stored-unit.js';
import { Session, type SessionOptions } from './session.js';
import { quoteName, tableNameOf } from './tables.js';
import { unitRows } from './unit-rows.js';
import { resolveTarget, type PostgresUrl } from './url.js';

/**
 * A database's metric tables read back a day at a time: a day's unit is the rows of its UTC window (`date`), or of
 * its store-local day (`day`) with `--days local`, in the order a unit's file sorts them.
 */
export function storedPostgresUnits(url: PostgresUrl, mode: DayMode, options: SessionOptions): StoredUnits {
  const session = new Session(url, resolveTarget(url, options.env), options);
  const dayOf = mode === 'utc' ? `to_char(date AT TIME ZONE 'UTC', 'YYYY-MM-DD')` : `to_char(day, 'YYYY-MM-DD')`;
  return {
    async unitsOf(metric) {
      const table = `${quoteName(session.target.schema)}.${quoteName(tableNameOf(metric))}`;
      const days = await session.use('cannot read the days of', async (client) => {
        const exists = await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [table]);
        if ((exists.rows[0]?.found ?? null) === null) return [];
        const found = await client.query<{ day: string }>(`SELECT DISTINCT ${dayOf} AS day FROM ${table} ORDER BY 1`);
        return found.rows.map((row) => row.day);
      });
      return new Map(
        days.map((day: CalendarDay) => [
          day,
          [
            {
              place: `${session.target.schema}.${tableNameOf(metric)} ${day}`,
              read: () =>
                session.use('cannot read the rows of', async (client) => {
                  // The rows a unit's replace finds (a UTC day's window, a local day's `day`), so the two never differ.
                  const { where, values } = unitRows(mode, { metric, day, store: '' });
                  const answer = await client.query({
                    text: `SELECT * FROM ${table} WHERE ${where} ORDER BY store_code COLLATE "C", date, zone COLLATE "C"`,
                    values,
                    rowMode: 'array',
                  });
                  return resultsOf({ columns: answer.fields.map((field) => field.name), rows: answer.rows as unknown[][] });
                }),
            },
          ],
        ]),
      );
    },
    close: () => session.close(),
  };
}
