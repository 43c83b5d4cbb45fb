/*
 * The nearest allowed name to a misspelt one, for the messages of 400s. Its own small module: the
 * handlers that validate by hand (KV, objects) load it at init, without the zod message formatter.
 */

/** Edit distance (insertions, deletions, substitutions) of two short names, case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length]!;
}

/**
 * The one of `options` that `value` was most likely meant as (`Stripe` → `stripe`, `respone_mode`
 * → `response_mode`): the same name in other case, else the closest within a third of its length
 * (at least 2 edits); `undefined` when none is that close.
 */
export function nearestName(value: unknown, options: readonly string[]): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 256) return undefined;
  const sameInOtherCase = options.find((option) => option !== value && option.toLowerCase() === value.toLowerCase());
  if (sameInOtherCase) return sameInOtherCase;
  const limit = Math.max(2, Math.floor(value.length / 3));
  let best: { option: string; d: number } | undefined;
  for (const option of options) {
    const d = distance(value, option);
    if (d > 0 && d <= limit && (!best || d < best.d)) best = { option, d };
  }
  return best?.option;
}

/** ` (did you mean "stripe"?)` when one of `options` is near `value`, else nothing. */
export const didYouMean = (value: unknown, options: readonly string[]): string => {
  const near = nearestName(value, options);
  return near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`;
};
