import type { Command } from 'commander';
import type { CommandContext } from './context.js';

// Placeholder until the sandbox command lands; it is not registered as a working command yet.
export function registerSandboxCommand(program: Command, _context: CommandContext): void {
  void program;
}
