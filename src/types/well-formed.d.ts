// String.prototype.isWellFormed is in every Node this package supports (>= 20), but in TypeScript's ES2024 library
// only; the rest of ES2024 is not all in Node 20, so only this method is declared.
interface String {
  /** False when the string holds a lone surrogate (a UTF-16 half that no code point can be made of). */
  isWellFormed(): boolean;
}
