import { formatState } from './state-text.js';
import type { StateStorage } from './storage.js';
import type { StateFile } from './versions/current.js';

/**
 * A state that lives in memory for a process's length: no file, no lock (a backtest's, which must write nothing).
 * It keeps the state object itself, changed in place (`updateState`): a backtest changes it every night of a year,
 * and a state of eight weeks of 20,000 stores' figures is megabytes of text to format and parse again each time.
 */
export class MemoryStateStorage implements StateStorage {
  private kept: { readonly text: string } | { readonly file: StateFile } | undefined;

  constructor(readonly location = '(in memory)') {}

  read(): Promise<string | undefined> {
    return Promise.resolve(this.text());
  }

  update(change: (current: string | undefined) => string | undefined): Promise<void> {
    const text = change(this.text());
    if (text !== undefined) this.kept = { text };
    return Promise.resolve();
  }

  updateState(
    change: (current: StateFile | undefined) => StateFile | undefined,
    parse: (text: string) => StateFile | undefined,
  ): Promise<void> {
    const current = this.kept === undefined ? undefined : 'file' in this.kept ? this.kept.file : parse(this.kept.text);
    const file = change(current);
    if (file !== undefined) this.kept = { file };
    return Promise.resolve();
  }

  private text(): string | undefined {
    return this.kept === undefined ? undefined : 'text' in this.kept ? this.kept.text : formatState(this.kept.file);
  }
}
