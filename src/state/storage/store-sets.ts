import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { UsageError } from '../../errors.js';
import type { StateFile } from './versions/current.js';

/** The id of a set of store codes: the first 16 hex digits of the SHA-256 of the sorted codes as JSON. */
export function storeSetId(sortedCodes: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(sortedCodes)).digest('hex').slice(0, 16);
}

/** The sorted codes as a JSON array, deflated and Base64-encoded. */
export function encodeStoreSet(sortedCodes: readonly string[]): string {
  return deflateRawSync(JSON.stringify(sortedCodes)).toString('base64');
}

export function decodeStoreSet(encoded: string | undefined, path: string, id: string): readonly string[] {
  try {
    const codes: unknown = JSON.parse(inflateRawSync(Buffer.from(encoded ?? '', 'base64')).toString('utf8'));
    if (Array.isArray(codes) && codes.every((code) => typeof code === 'string')) return codes;
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
