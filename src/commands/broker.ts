import type { Command } from 'commander';
import type { CommandContext } from './context.js';

// Placeholder until the broker command lands; it is not registered as a working command yet.
export function registerBrokerCommand(program: Command, _context: CommandContext): void {
  void program;
}
