import type { Command } from 'commander';
export function registerObjects(_program: Command): void {}
