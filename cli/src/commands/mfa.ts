import type { Command } from 'commander';
export function registerMfa(_program: Command): void {}
