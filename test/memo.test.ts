import { describe, expect, it } from 'vitest';
import { boundedMemo } from '../src/memo.js';

describe('boundedMemo', () => {
  it('computes each key once, and starts over when the bound is reached', () => {
    const computed: string[] = [];
    const upper = boundedMemo((key) => {
      computed.push(key);
      return key.toUpperCase();
    }, 2);
    expect([upper('a'), upper('b'), upper('a')]).toEqual(['A', 'B', 'A']);
    expect(computed).toEqual(['a', 'b']);
    upper('c'); // third distinct key: the memory starts over
    upper('a');
    expect(computed).toEqual(['a', 'b', 'c', 'a']);
  });
});
