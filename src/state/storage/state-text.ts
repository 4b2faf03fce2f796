import type { DayRange } from '../../window/day-ranges.js';
import type { StateFile } from './versions/current.js';

/**
 * The file's text: keys in a fixed order, one range or pending day per line, so a diff of two states reads well and a
 * year of coverage stays short.
 */
export function formatState(file: StateFile): string {
  const list = (items: readonly string[], indent: string): string =>
    items.length === 0 ? '[]' : `[\n${items.map((item) => `${indent}  ${item}`).join(',\n')}\n${indent}]`;
  const object = (fields: readonly (readonly [string, string | undefined])[], indent: string): string => {
    const present = fields.filter((field): field is readonly [string, string] => field[1] !== undefined);
    return present.length === 0
      ? '{}'
      : `{\n${present.map(([key, value]) => `${indent}  ${JSON.stringify(key)}: ${value}`).join(',\n')}\n${indent}}`;
  };
  const ranges = (value: readonly DayRange[] | undefined): string | undefined =>
    value === undefined
      ? undefined
      : list(
          value.map((range) => JSON.stringify(range).replace(',', ', ')),
          '      ',
        );
  const byDay = (value: Readonly<Record<string, unknown>> | undefined): string | undefined =>
    value === undefined
      ? undefined
      : object(
          Object.keys(value)
            .sort()
            .map((day) => [day, JSON.stringify(value[day])] as const),
          '      ',
        );
  const metrics = Object.keys(file.metrics)
    .sort()
    .map((key) => {
      const entry = file.metrics[key]!;
      const fields = [
        ['complete', ranges(entry.complete)],
        ['accepted', ranges(entry.accepted)],
        ['givenUp', ranges(entry.givenUp)],
        ['pending', byDay(entry.pending)],
        ['stores', entry.stores === undefined ? undefined : String(entry.stores)],
        ['storeSet', entry.storeSet === undefined ? undefined : JSON.stringify(entry.storeSet)],
        ['profiles', byDay(entry.profiles)],
        ['storeFigures', byDay(entry.storeFigures)],
      ] as const;
      return [key, object(fields, '    ')] as const;
    });
  const storeSets = Object.entries(file.storeSets).map(([id, codes]) => [id, JSON.stringify(codes)] as const);
  return `${object(
    [
      ['version', String(file.version)],
      ['metrics', object(metrics, '  ')],
      ['storeSets', object(storeSets, '  ')],
      ['lastRun', file.lastRun === undefined ? undefined : JSON.stringify(file.lastRun)],
      ['days', file.days === undefined ? undefined : JSON.stringify(file.days)],
      ['layout', file.layout === undefined ? undefined : JSON.stringify(file.layout)],
      ['format', file.format === undefined ? undefined : JSON.stringify(file.format)],
    ],
    '',
  )}\n`;
}
