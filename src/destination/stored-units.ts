import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { errnoCode, UsageError } from '../errors.js';
import { dayOfUnitPath, metricFolder, type Layout } from '../output/layout.js';
import { OUTPUT_FORMATS } from '../output/format.js';
import { objectKey, type ObjectLocation } from '../output/object-location.js';
import { eachStoredResult, storedResults } from '../output/read-back.js';
import { asOutputError } from '../output/write-failure.js';
import type { DayMode } from '../window/day-mode.js';
import type { CalendarDay } from '../window/days.js';
import type { ObjectStores } from './object-stores.js';
import type { StoredUnit, StoredUnits } from './stored-unit.js';

export type { StoredUnit, StoredUnits };

/** How the output was written, as its state keeps it. */
export interface StoredSettings {
  readonly layout: Layout;
  readonly mode: DayMode;
}

/** The units a folder holds, read back as its layout names them. */
export function storedFolderUnits(dir: string, settings: StoredSettings): StoredUnits {
  return fileUnits(settings.layout, folderShelf(dir));
}

/** The units under a bucket's prefix, read back as its layout names them. */
export function storedBucketUnits(location: ObjectLocation, settings: StoredSettings, stores: ObjectStores): StoredUnits {
  return fileUnits(settings.layout, {
    list: async (folder) => {
      const store = await stores.get(location.bucket);
      const base = objectKey(location, '');
      return (await store.listKeys(objectKey(location, `${folder}/`))).map((key) => key.slice(base.length));
    },
    read: async (path) => (await (await stores.get(location.bucket)).read(objectKey(location, path)))?.body,
  });
}

/** stdout keeps nothing: there is nothing to read back. */
export function noStoredUnits(): StoredUnits {
  throw new UsageError('stdout keeps nothing to read back: name the output folder, bucket or database with -o');
}

/** Files under an output, by path relative to it, `/`-separated. */
interface Shelf {
  /** Every file under a folder, however deep. */
  list(folder: string): Promise<string[]>;
  read(path: string): Promise<Uint8Array | undefined>;
}

function folderShelf(dir: string): Shelf {
  return {
    async list(folder) {
      const root = join(dir, folder);
      try {
        const entries = await readdir(root, { recursive: true, withFileTypes: true });
        return entries
          .filter((entry) => entry.isFile())
          .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'));
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return [];
        throw asOutputError(error, `cannot list ${root}`);
      }
    },
    async read(path) {
      try {
        return await readFile(join(dir, path));
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return undefined;
        throw asOutputError(error, `cannot read ${join(dir, path)}`);
      }
    },
  };
}

/** A folder's or a bucket's unit files, found by the layout's names (any format: a state may predate keeping one). */
function fileUnits(layout: Layout, shelf: Shelf): StoredUnits {
  return {
    async unitsOf(metric) {
      const byDay = new Map<CalendarDay, StoredUnit[]>();
      for (const path of (await shelf.list(metricFolder(metric, layout))).sort()) {
        for (const format of OUTPUT_FORMATS) {
          const day = dayOfUnitPath(path, metric, format, layout);
          if (day === undefined) continue;
          const unit: StoredUnit = {
            place: path,
            read: async () => {
              const bytes = await shelf.read(path);
              return bytes === undefined ? [] : storedResults(bytes, format);
            },
            each: async (visitor) => {
              const bytes = await shelf.read(path);
              if (bytes === undefined) visitor();
              else await eachStoredResult(bytes, format, visitor, { zones: false });
            },
          };
          byDay.set(day, [...(byDay.get(day) ?? []), unit]);
        }
      }
      return new Map([...byDay].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    },
    close: () => Promise.resolve(),
  };
}
