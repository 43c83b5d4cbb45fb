/**
 * The one clock convention: the current time in epoch milliseconds, as `Date.now` reads it. Use
 * cases and the adapters that write expiry times take one, so a test can pin or step the time;
 * the composition root (`functions/handlers/*.ts`, `compose*`) passes `Date.now`.
 */
export type Clock = () => number;

/** Whole epoch seconds at `ms`, as DynamoDB TTL attributes and signature timestamps count time. */
export const epochSeconds = (ms: number): number => Math.floor(ms / 1000);
