import type { Command } from 'commander';
export function registerKv(_program: Command): void {}
