import type { Command } from 'commander';
import type { CommandContext } from './context.js';

export function registerImportCommands(program: Command, _context: CommandContext): void {
  void program;
}
