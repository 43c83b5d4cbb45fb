import { InvalidArgumentError } from 'commander';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: an ISO 8601 time, or a duration back from now (`90s`, `10m`, `2h`, `1d`). */
export function parseSince(value: string, now = Date.now()): string {
  const duration = /^(\d+)([smhd])$/.exec(value);
  if (duration) return new Date(now - Number(duration[1]) * UNITS[duration[2]!]!).toISOString();
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw new InvalidArgumentError('expected an ISO 8601 time (2026-01-01T10:00:00Z) or a duration (90s, 10m, 2h, 1d)');
  return new Date(ms).toISOString();
}
