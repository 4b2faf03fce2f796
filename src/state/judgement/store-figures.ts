/**
 * One day's figure per store, kept compact: the stores as a sorted list the day shares with others (a chain's stores
 * change rarely, so many days share one), and each store's figure as two bytes on a log scale. 20,000 stores cost
 * 40 kB a day before base64; the rule needs eight weeks of them, not a year.
 */
export interface StoreFigures {
  /** Sorted store codes; days with the same stores share the same array and `indexOf`. */
  readonly codes: readonly string[];
  readonly indexOf: ReadonlyMap<string, number>;
  /** Each store's figure, in the order of `codes`. */
  readonly values: Float64Array;
}

/** 1024 steps per doubling (0.07% apart, far finer than any rule's threshold) from 2^-20 to 2^44: traffic shares to millions of visitors. */
const STEPS_PER_DOUBLING = 1024;
const LOWEST_POWER = -20;
const LARGEST_CODE = 65_535;

/** A figure as its two-byte code: 0 for zero (and below the scale), otherwise its rounded log. */
export function figureCode(value: number): number {
  if (!(value > 0)) return 0;
  const code = 1 + Math.round((Math.log2(value) - LOWEST_POWER) * STEPS_PER_DOUBLING);
  return Math.max(1, Math.min(LARGEST_CODE, code));
}

export function figureOf(code: number): number {
  return code === 0 ? 0 : 2 ** ((code - 1) / STEPS_PER_DOUBLING + LOWEST_POWER);
}

/** The figures in `codes`' order as base64 text, two bytes (big-endian) a store. */
export function encodeFigures(values: Float64Array): string {
  return Buffer.from(figureBytes(values)).toString('base64');
}

/** Two bytes a store; a function of its own, so that the optimizing compiler takes this loop without the Base64 after it. */
function figureBytes(values: Float64Array): Uint8Array {
  const bytes = new Uint8Array(values.length * 2);
  for (let index = 0; index < values.length; index++) {
    const code = figureCode(values[index]!);
    bytes[index * 2] = code >>> 8;
    bytes[index * 2 + 1] = code & 0xff;
  }
  return bytes;
}

/** Reads `encodeFigures`' text back; undefined when it does not hold one figure per store. */
export function decodeFigures(text: string, stores: number): Float64Array | undefined {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== stores * 2) return undefined;
  const values = new Float64Array(stores);
  for (let index = 0; index < stores; index++) values[index] = figureOf((bytes[index * 2]! << 8) | bytes[index * 2 + 1]!);
  return values;
}

/**
 * A day's figures over a sorted store list, with the list's index (share it between days with the same stores);
 * without one, it is made when first asked for (a day judged against its history looks its own stores up by place).
 */
export function storeFigures(codes: readonly string[], values: Float64Array, indexOf?: ReadonlyMap<string, number>): StoreFigures {
  if (indexOf !== undefined) return { codes, values, indexOf };
  let made: ReadonlyMap<string, number> | undefined;
  return {
    codes,
    values,
    get indexOf() {
      made ??= new Map(codes.map((code, index) => [code, index]));
      return made;
    },
  };
}
