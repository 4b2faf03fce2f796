import { describe, expect, it } from 'vitest';

describe('toEqual on Buffers (test/buffer-equality.ts)', () => {
  it('holds equal bytes equal and tells different bytes or lengths apart, inside maps too', () => {
    const tree = (...texts: string[]) => new Map(texts.map((text, index) => [`file-${index}`, Buffer.from(text)]));
    expect(tree('a,b\n1,2\n', 'x')).toEqual(tree('a,b\n1,2\n', 'x'));
    expect(tree('a,b\n1,2\n', 'x')).not.toEqual(tree('a,b\n1,3\n', 'x'));
    expect(tree('a,b\n1,2\n')).not.toEqual(tree('a,b\n1,2\n\n'));
    expect(Buffer.from('same')).not.toEqual('same');
  });
});
