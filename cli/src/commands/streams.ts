import type { Command } from 'commander';
export function registerStreams(_program: Command): void {}
