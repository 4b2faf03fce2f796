/**
 * Small, fast, seeded integer hashing. The sandbox derives every datum from a hash of its coordinates
 * (seed, store, local day, zone, ...), so nothing is stored and any slice of the data costs only what it shows.
 */

/** murmur3's 32-bit finaliser: good avalanche for cheap. */
function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** An unsigned 32-bit hash of a tuple of integers (order matters). */
export function hashInts(...parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = mix32(h ^ Math.imul(part | 0, 0x27d4eb2d));
  }
  return h;
}

/** An unsigned 32-bit FNV-1a hash of a string, for cache keys and shuffle seeds. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    h ^= text.charCodeAt(index);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x100000000;
  };
}

/** hashInts for exactly five parts, without the rest-array allocation (the hot path of value generation). */
export function hash5(a: number, b: number, c: number, d: number, e: number): number {
  let h = 0x9e3779b9;
  h = mix32(h ^ Math.imul(a | 0, 0x27d4eb2d));
  h = mix32(h ^ Math.imul(b | 0, 0x27d4eb2d));
  h = mix32(h ^ Math.imul(c | 0, 0x27d4eb2d));
  h = mix32(h ^ Math.imul(d | 0, 0x27d4eb2d));
  return mix32(h ^ Math.imul(e | 0, 0x27d4eb2d));
}
