import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { UsageError } from '../../errors.js';
import { STATE_BOUNDS } from './state-bounds.js';
import type { StateFile } from './versions/current.js';

/** The id of a set of store codes: the first 16 hex digits of the SHA-256 of the sorted codes as JSON. */
export function storeSetId(sortedCodes: readonly string[]): string {
  // A chain's stores change rarely: the set hashed last is most often the one asked again (each day of a backfill,
  // each night of a backtest), and comparing 20,000 codes costs far less than hashing them.
  const last = lastHashed;
  if (last !== undefined && sameCodes(last.codes, sortedCodes)) return last.id;
  const id = createHash('sha256').update(JSON.stringify(sortedCodes)).digest('hex').slice(0, 16);
  lastHashed = { codes: [...sortedCodes], id };
  return id;
}

let lastHashed: { readonly codes: readonly string[]; readonly id: string } | undefined;

function sameCodes(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}

/** The sorted codes as a JSON array, deflated and Base64-encoded. */
export function encodeStoreSet(sortedCodes: readonly string[]): string {
  return deflateRawSync(JSON.stringify(sortedCodes)).toString('base64');
}

/**
 * The codes of a set the state says has `stores` stores (undefined: as many as a set may have). It is inflated no
 * further than that many codes can take: a set that inflates to more (a deflate bomb) is damaged, found out at the
 * cost of the bound, not of what it claims.
 */
export function decodeStoreSet(encoded: string | undefined, path: string, id: string, stores?: number): readonly string[] {
  const most = Math.min(stores ?? STATE_BOUNDS.stores, STATE_BOUNDS.stores);
  const maxOutputLength = Math.min(2 + most * STATE_BOUNDS.storeCodeBytes, STATE_BOUNDS.storeSetBytes);
  try {
    const json = inflateRawSync(Buffer.from(encoded ?? '', 'base64'), { maxOutputLength }).toString('utf8');
    const codes: unknown = JSON.parse(json);
    if (Array.isArray(codes) && codes.length <= most && codes.every((code) => typeof code === 'string')) return codes;
  } catch {
    // Reported below.
  }
  throw new UsageError(`state file ${path}: store set ${JSON.stringify(id)} is damaged; fix or delete it`);
}

/** Sets no key refers to any more are dropped, so the file does not grow with every change of a chain's stores. */
export function pruneStoreSets(file: StateFile): void {
  const used = new Set<string | undefined>();
  for (const entry of Object.values(file.metrics)) {
    used.add(entry.storeSet);
    for (const [id] of Object.values(entry.storeFigures ?? {})) used.add(id);
  }
  for (const id of Object.keys(file.storeSets)) if (!used.has(id)) delete file.storeSets[id];
}
