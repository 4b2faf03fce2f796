import { createHash } from 'node:crypto';
import type { ContentDigest } from '../../output/content-hash.js';
import type { UnitContent } from '../../output/sinks.js';

/**
 * What a unit would load, as a digest: its rows' CSV text (what COPY is given) and its set-aside records. Equal
 * digests, equal rows: a unit whose digest its coverage already holds is left as it is. `bytes` is the size of the
 * rows' text as loaded.
 */
export function unitDigest(data: Pick<UnitContent, 'pieces'>, rejected: readonly string[]): ContentDigest {
  const hash = createHash('sha256');
  let bytes = 0;
  for (const piece of data.pieces) {
    hash.update(piece);
    bytes += piece.length;
  }
  // The records set aside count too: a re-run that sets aside other records is a change.
  for (const line of rejected) hash.update(`\u0000${line}`);
  return { sha256: hash.digest('hex'), bytes };
}
