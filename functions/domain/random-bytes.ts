/** A source of cryptographically secure random bytes, e.g. `crypto.randomBytes`; injected so tests can fix it. */
export type RandomBytes = (size: number) => Uint8Array;
