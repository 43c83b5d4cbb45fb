/**
 * Deterministic synthetic text for the search bench and the search scale test: the same seed gives
 * the same documents on every run and machine, so a ranking check or a figure can be repeated.
 */

/** mulberry32: a small seeded generator of numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `size` made-up words and a function drawing `count` of them with a Zipf-like skew, as natural text has. */
export function skewedWords(size: number): (next: () => number, count: number) => string {
  const vocabulary = Array.from({ length: size }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);
  return (next, count) => Array.from({ length: count }, () => vocabulary[Math.floor(vocabulary.length * next() ** 2.5)]!).join(' ');
}
