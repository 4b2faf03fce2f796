import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DigestingChunks } from '../../src/output/content-hash.js';

describe('DigestingChunks', () => {
  const chunks = ['header,é\n', Buffer.from('a,1\n'), new Uint8Array([98, 44, 50, 10])];
  const whole = Buffer.concat([Buffer.from('header,é\n'), Buffer.from('a,1\nb,2\n')]);

  it('hashes the bytes as a pass reads them: the same SHA-256 and size as the whole', () => {
    const content = new DigestingChunks(() => chunks);
    expect(content.digest).toBeUndefined();
    expect(Buffer.concat([...content.chunks()].map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)))).toEqual(whole);
    expect(content.digest).toEqual({ bytes: whole.length, sha256: createHash('sha256').update(whole).digest('hex') });
  });

  it('keeps the digest of the last pass read to its end, not of one stopped half-way', () => {
    const content = new DigestingChunks(() => chunks);
    for (const chunk of content.chunks()) if (chunk) break;
    expect(content.digest).toBeUndefined();
    expect([...content.chunks()]).toHaveLength(3);
    expect(content.digest?.bytes).toBe(whole.length);
  });
});
