/**
 * Setup file: `toEqual` compares two Buffers with Buffer.equals. vitest's own deep equality walks a Buffer index by
 * index; comparing two runs' file trees (a few hundred kilobytes) took a fifth of a second of blocked event loop,
 * enough to throw off the timing of the runs beside it. Failures still print both values.
 */
import { expect } from 'vitest';

const REGISTERED = Symbol.for('area-metrics.buffer-equality');
const registry = globalThis as { [REGISTERED]?: true };

// Files share their worker (isolate: false) and this runs before each: register once per worker.
if (registry[REGISTERED] === undefined) {
  registry[REGISTERED] = true;
  expect.addEqualityTesters([(a: unknown, b: unknown) => (Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : undefined)]);
}
