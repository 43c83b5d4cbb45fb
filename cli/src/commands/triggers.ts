import type { Command } from 'commander';
export function registerTriggers(_program: Command): void {}
