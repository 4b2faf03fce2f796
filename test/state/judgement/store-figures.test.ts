import { describe, expect, it } from 'vitest';
import { decodeFigures, encodeFigures, figureCode, figureOf } from '../../../src/state/judgement/store-figures.js';

describe('store figures', () => {
  it('keeps a figure within 0.04% from a traffic share to millions of visitors, and zero as zero', () => {
    for (const value of [0.00002, 0.5, 1, 37, 5400.5, 1_234_567, 9e12]) {
      expect(Math.abs(figureOf(figureCode(value)) / value - 1)).toBeLessThan(0.0004);
    }
    expect(figureOf(figureCode(0))).toBe(0);
    expect(figureCode(-1)).toBe(0);
  });

  it('writes two bytes a store and reads them back; text of another length is refused', () => {
    const text = encodeFigures(Float64Array.of(0, 1, 250, 80_000));
    expect(Buffer.from(text, 'base64')).toHaveLength(8);
    const values = decodeFigures(text, 4)!;
    expect([...values].map((value) => Number(value.toPrecision(3)))).toEqual([0, 1, 250, 80_000]);
    expect(decodeFigures(text, 5)).toBeUndefined();
  });
});
