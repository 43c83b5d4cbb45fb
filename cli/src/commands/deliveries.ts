import type { Command } from 'commander';
export function registerDeliveries(_program: Command): void {}
