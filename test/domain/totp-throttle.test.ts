import { describe, expect, it } from 'vitest';
import { ATTEMPT_WINDOW_SECONDS, MAX_FAILED_ATTEMPTS, attemptThrottle } from '../../functions/domain/totp/index.js';

const NOW = 1_750_000_000_000;
const WINDOW_MS = ATTEMPT_WINDOW_SECONDS * 1000;
const secondsAgo = (seconds: number) => NOW - seconds * 1000;

describe('attemptThrottle', () => {
  it('uses 5 failures in 15 minutes', () => {
    expect(MAX_FAILED_ATTEMPTS).toBe(5);
    expect(ATTEMPT_WINDOW_SECONDS).toBe(900);
  });

  it('does not block with no failures', () => {
    expect(attemptThrottle({ failureTimesMs: [], nowMs: NOW })).toEqual({ blocked: false });
  });

  it('does not block at 4 failures in the window', () => {
    const failureTimesMs = [1, 2, 3, 4].map(secondsAgo);
    expect(attemptThrottle({ failureTimesMs, nowMs: NOW })).toEqual({ blocked: false });
  });

  it('blocks at 5 failures until the oldest of them leaves the window', () => {
    const failureTimesMs = [100, 50, 40, 30, 20].map(secondsAgo);
    expect(attemptThrottle({ failureTimesMs, nowMs: NOW })).toEqual({ blocked: true, retryAfterSeconds: 800 });
  });

  it('blocks when all 5 failures happened just now, for the whole window', () => {
    const failureTimesMs = Array<number>(5).fill(NOW);
    expect(attemptThrottle({ failureTimesMs, nowMs: NOW })).toEqual({ blocked: true, retryAfterSeconds: 900 });
  });

  it('counts the 5th most recent failure when there are more, whatever the order', () => {
    const failureTimesMs = [10, 800, 20, 700, 30, 600, 40].map(secondsAgo);
    // most recent five: 10, 20, 30, 40, 600 s ago → the one 600 s ago leaves in 300 s
    expect(attemptThrottle({ failureTimesMs, nowMs: NOW })).toEqual({ blocked: true, retryAfterSeconds: 300 });
  });

  it('still blocks at the last millisecond the oldest failure is inside the window', () => {
    const oldest = NOW - WINDOW_MS + 1;
    const failureTimesMs = [oldest, ...[1, 2, 3, 4].map(secondsAgo)];
    expect(attemptThrottle({ failureTimesMs, nowMs: NOW })).toEqual({ blocked: true, retryAfterSeconds: 1 });
  });

  it('unblocks exactly when the oldest failure is a full window old', () => {
    const oldest = NOW - WINDOW_MS;
    const failureTimesMs = [oldest, ...[1, 2, 3, 4].map(secondsAgo)];
    expect(attemptThrottle({ failureTimesMs, nowMs: NOW })).toEqual({ blocked: false });
  });

  it('ignores failures older than the window', () => {
    const failureTimesMs = [2000, 1000, 901, 1, 2, 3, 4].map(secondsAgo);
    expect(attemptThrottle({ failureTimesMs, nowMs: NOW })).toEqual({ blocked: false });
  });

  it('rounds retryAfterSeconds up to whole seconds', () => {
    const failureTimesMs = [NOW - 100_500, ...[1, 2, 3, 4].map(secondsAgo)];
    // unblocks 799.5 s from now
    expect(attemptThrottle({ failureTimesMs, nowMs: NOW })).toEqual({ blocked: true, retryAfterSeconds: 800 });
  });
});
