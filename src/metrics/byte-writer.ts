/**
 * The UTF-8 output of one page. Texts are written into one scratch buffer kept for the next page (grown by doubling
 * when a page needs more), and `take` copies out exactly what was written: a unit waits for its turn to be written
 * as a few byte arrays outside the JS heap, not as thousands of strings the garbage collector must trace and move.
 * The CSV encoder writes its rows here piece by piece (no string per row to build, flatten and encode again).
 */
let scratch = Buffer.allocUnsafeSlow(1 << 20);

export class ByteWriter {
  length = 0;

  /** A page's writer borrows the scratch buffer (one page at a time); a writer of its own passes a buffer. */
  constructor(private buffer: Buffer = scratch) {}

  /** Room for `size` more bytes. */
  private reserve(size: number): Buffer {
    if (this.buffer.length - this.length < size) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.length + size));
      this.buffer.copy(grown, 0, 0, this.length);
      if (this.buffer === scratch) scratch = grown;
      this.buffer = grown;
    }
    return this.buffer;
  }

  /** Appends the text as UTF-8; returns its end offset. */
  write(text: string): number {
    // byteLength first: it also flattens the concatenated text, after which write() copies it in one pass.
    const size = Buffer.byteLength(text);
    this.length += this.reserve(size).write(text, this.length, size);
    return this.length;
  }

  /** Appends a text of ASCII characters only (digits, dates), one byte each: short texts, no call into C++. */
  ascii(text: string): void {
    const buffer = this.reserve(text.length);
    for (let index = 0; index < text.length; index++) buffer[this.length + index] = text.charCodeAt(index);
    this.length += text.length;
  }

  /** Appends one ASCII character, by its code. */
  byte(code: number): void {
    this.reserve(1)[this.length++] = code;
  }

  /** Appends bytes. */
  bytes(bytes: Uint8Array): void {
    this.reserve(bytes.length).set(bytes, this.length);
    this.length += bytes.length;
  }

  /** Appends a copy of what was written from `start` to `end`. */
  repeat(start: number, end: number): void {
    this.length += this.reserve(end - start).copy(this.buffer, this.length, start, end);
  }

  /** Exactly the bytes written, in memory of their own. */
  take(): Uint8Array {
    const exact = new Uint8Array(this.length);
    exact.set(this.buffer.subarray(0, this.length));
    return exact;
  }
}
