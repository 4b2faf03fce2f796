import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.js';

/**
 * Imports between the rooms of `src/` run one way, from the process edge down to the shared base, so each room can
 * be read without the ones above it. A room may import only rooms of a lower layer (and itself).
 */
const LAYERS: Readonly<Record<string, number>> = {
  edge: 0, // src/index.ts and src/cli.ts
  commands: 1,
  backtest: 2, // replays the import's judgement over what an output holds (or over the sandbox's data)
  import: 3, // the three applications, siblings: none imports another
  sandbox: 3,
  broker: 3,
  destination: 4, // where a run writes, chosen once from -o: sink, manifests, state place, lineage datasets, read-back
  metrics: 4,
  state: 5, // coverage: the state file, catch-up planning, day completion, status
  auth: 5,
  lineage: 5,
  output: 6,
  fetch: 6,
  window: 7,
  log: 7,
  base: 8, // the other files directly in src/: errors, redact, memo, version
  types: 8,
};

/** The three applications: the importer, the token broker and the API's emulator share the rooms below, not each other. */
const SIBLINGS = ['import', 'broker', 'sandbox'];

const SRC = join(ROOT, 'src');

function roomOf(file: string): string {
  const path = relative(SRC, file);
  const [first] = path.split('/');
  if (path === first) return first === 'index.ts' || first === 'cli.ts' ? 'edge' : 'base';
  return first ?? 'base';
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g;
/** Every import of another file of src/: static (values and types alike) and lazy `import('...')`. */
const ANY_IMPORT = /(?:from\s+|import\()'(\.{1,2}\/[^']+)'/g;

/** The source file an import names (`./x.js` is `x.ts`). */
function importedFile(file: string, specifier: string): string {
  return resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
}

/** The import circles between files: each as its files in order, the first repeated at the end. */
function importCircles(files: readonly string[]): string[][] {
  const edges = new Map(
    files.map((file) => [
      file,
      [...new Set([...readFileSync(file, 'utf8').matchAll(ANY_IMPORT)].map((match) => importedFile(file, match[1]!)))],
    ]),
  );
  const circles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next].map((each) => relative(SRC, each)));
      else if (!state.has(next) && edges.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return circles;
}

/** How a folder of src/ is cut into rooms, and the layer of each. */
interface Layering {
  readonly root: string;
  readonly roomOf: (file: string) => string;
  readonly layers: Readonly<Record<string, number>>;
}

/** The rooms of `files` that no layer places. */
function unplacedRooms(files: readonly string[], { roomOf, layers }: Layering): string[] {
  return [...new Set(files.map(roomOf))].filter((room) => layers[room] === undefined);
}

/** Each import (those `pattern` finds) of a file of another room under the root not below its own, as a line naming both. */
function upwardImports(files: readonly string[], pattern: RegExp, { root, roomOf, layers }: Layering): string[] {
  return files.flatMap((file) => {
    const from = roomOf(file);
    return [...readFileSync(file, 'utf8').matchAll(pattern)]
      .map((match) => [match[1]!, importedFile(file, match[1]!)] as const)
      .filter(([, target]) => !relative(root, target).startsWith('..'))
      .map(([specifier, target]) => [specifier, roomOf(target)] as const)
      .filter(([, to]) => to !== from && (layers[to] ?? -1) <= (layers[from] ?? -1))
      .map(([specifier, to]) => `${relative(SRC, file)} imports ${specifier} (${from} -> ${to})`);
  });
}

describe('the rooms of src/', () => {
  const files = sourceFiles(SRC);
  const layering = { root: SRC, roomOf, layers: LAYERS };

  it('are all placed in a layer', () => {
    expect(unplacedRooms(files, layering)).toEqual([]);
  });

  it('import only rooms below them', () => {
    expect(upwardImports(files, IMPORT, layering)).toEqual([]);
  });

  it('are in whole-number layers', () => {
    expect(Object.entries(LAYERS).filter(([, layer]) => !Number.isInteger(layer))).toEqual([]);
  });

  it('keep the importer, the broker and the sandbox apart: none imports another (types and lazy imports too)', () => {
    const crossing: string[] = [];
    for (const file of files) {
      const from = roomOf(file);
      if (!SIBLINGS.includes(from)) continue;
      for (const match of readFileSync(file, 'utf8').matchAll(ANY_IMPORT)) {
        const to = roomOf(resolve(dirname(file), match[1]!));
        if (to !== from && SIBLINGS.includes(to)) crossing.push(`${relative(SRC, file)} imports ${match[1]} (${from} -> ${to})`);
      }
    }
    expect(crossing).toEqual([]);
  });

  it('import no file that imports them back, however far round (type and lazy imports count too)', () => {
    expect(importCircles(files)).toEqual([]);
  });

  it('are small files: none over 450 lines (a file that grows past it holds two things)', () => {
    const long = files
      .map((file) => [relative(SRC, file), readFileSync(file, 'utf8').split('\n').length] as const)
      .filter(([, lines]) => lines > 450);
    expect(long).toEqual([]);
  });
});

/**
 * Inside the broker the same one-way rule holds between its sub-rooms: the HTTP layer (composition, the request
 * contract, the plugins) over the token core and the attestation gate (siblings: neither imports the other), over
 * the config and the log lines, over the broker's problem vocabulary (the files directly in src/broker/).
 */
const BROKER_LAYERS: Readonly<Record<string, number>> = {
  http: 0,
  token: 1,
  attestation: 1,
  config: 2,
  log: 2,
  base: 3, // problem.ts
};

const BROKER = join(SRC, 'broker');

function brokerRoomOf(file: string): string {
  const path = relative(BROKER, file);
  const [first = 'base'] = path.split('/');
  return path === first ? 'base' : first;
}

describe('the sub-rooms of src/broker/', () => {
  const files = sourceFiles(BROKER);
  const layering = { root: BROKER, roomOf: brokerRoomOf, layers: BROKER_LAYERS };

  it('are all placed in a layer', () => {
    expect(unplacedRooms(files, layering)).toEqual([]);
  });

  it('import only sub-rooms below them (type and lazy imports count too)', () => {
    expect(upwardImports(files, ANY_IMPORT, layering)).toEqual([]);
  });
});
