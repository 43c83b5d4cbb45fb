/**
 * The text rules every search index shares: how text becomes terms, how a query word matches a
 * document word (exactly, by prefix, within a typo), and how a match is highlighted. Pure.
 */
import { MAX_PREFIX_CHARS, MIN_PREFIX_CHARS, ONE_TYPO_MIN_CHARS, TWO_TYPOS_MIN_CHARS } from './limits.js';

/** Anything but a letter, a combining mark or a digit separates terms. */
const SEPARATOR = /[^\p{L}\p{M}\p{N}]+/u;

/** Lower-cased terms of `text`, in order (no stemming, no stop words). */
export const tokenize = (text: string): string[] => text.toLowerCase().split(SEPARATOR).filter(Boolean);

/** The value at a dotted path of a document. */
export function valueAt(doc: Record<string, unknown>, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A searchable field's text: strings and numbers, and those in an array, joined by spaces. */
export function fieldText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' || typeof item === 'number' ? fieldText(item) : '')).filter(Boolean).join(' ');
  return '';
}

/** Every prefix (edge n-gram) of each distinct term, from MIN_PREFIX_CHARS to MAX_PREFIX_CHARS characters. */
export function edgeGrams(terms: Iterable<string>): string[] {
  const grams = new Set<string>();
  for (const term of terms) {
    const chars = [...term];
    for (let n = MIN_PREFIX_CHARS; n <= Math.min(chars.length, MAX_PREFIX_CHARS); n++) grams.add(chars.slice(0, n).join(''));
  }
  return [...grams];
}

/** Edits a query word may be from a document word (0, 1 or 2), by its length in characters. */
export const typosAllowed = (word: string): number => {
  const length = [...word].length;
  return length >= TWO_TYPOS_MIN_CHARS ? 2 : length >= ONE_TYPO_MIN_CHARS ? 1 : 0;
};

/** Levenshtein distance, stopping early once it passes `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/** How query words are matched. */
export interface MatchRules {
  /** The last word also matches words it begins. */
  prefix: boolean;
  /** Words match within `typosAllowed` edits. */
  typos: boolean;
}

/** Whether one query word (at `position` of `count`) matches one document term. */
export function wordMatches(word: string, term: string, isLast: boolean, rules: MatchRules): boolean {
  if (term === word) return true;
  if (rules.prefix && isLast && term.startsWith(word)) return true;
  if (!rules.typos) return false;
  const typos = typosAllowed(word);
  return typos > 0 && editDistance(word, term, typos) <= typos;
}

/** Whether a document's terms hold every query word (all-terms matching), checked term by term. */
export function holdsEveryWord(words: readonly string[], terms: ReadonlySet<string>, rules: MatchRules): boolean {
  return words.every((word, i) => {
    const isLast = i === words.length - 1;
    if (terms.has(word)) return true;
    for (const term of terms) if (wordMatches(word, term, isLast, rules)) return true;
    return false;
  });
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * `text` as HTML-escaped text with each word that matches a query word wrapped in the tags:
 * safe to insert into a page as it is.
 */
export function highlight(text: string, words: readonly string[], rules: MatchRules, tags: { pre: string; post: string }): { html: string; matched: boolean } {
  let matched = false;
  let html = '';
  let last = 0;
  for (const match of text.matchAll(/[\p{L}\p{M}\p{N}]+/gu)) {
    const term = match[0].toLowerCase();
    const hit = words.some((word, i) => wordMatches(word, term, i === words.length - 1, rules));
    html += escapeHtml(text.slice(last, match.index));
    html += hit ? `${tags.pre}${escapeHtml(match[0])}${tags.post}` : escapeHtml(match[0]);
    matched ||= hit;
    last = match.index + match[0].length;
  }
  return { html: html + escapeHtml(text.slice(last)), matched };
}
