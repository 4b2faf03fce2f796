import type { StateStorage } from './storage.js';

/** A state that lives in memory for a process's length: no file, no lock (a backtest's, which must write nothing). */
export class MemoryStateStorage implements StateStorage {
  private text: string | undefined;

  constructor(readonly location = '(in memory)') {}

  read(): Promise<string | undefined> {
    return Promise.resolve(this.text);
  }

  update(change: (current: string | undefined) => string | undefined): Promise<void> {
    this.text = change(this.text) ?? this.text;
    return Promise.resolve();
  }
}
