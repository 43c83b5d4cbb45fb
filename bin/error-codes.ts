import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ERROR_STATUS, type ErrorCode } from '../functions/shared/errors.js';

/**
 * `npm run docs:errors`: writes the list of error codes in docs/api.md ("Calling the API") from the one
 * error type (`ERROR_STATUS` in functions/shared/errors.ts), between its two markers, so the guide lists
 * every code the product answers and no other (test/domain/error-codes.test.ts checks it is current).
 */
export const GUIDE = resolve(import.meta.dirname, '../docs/api.md');
export const LIST_START = '<!-- error codes: written by `npm run docs:errors` from functions/shared/errors.ts -->';
export const LIST_END = '<!-- end of error codes -->';

/** What a reader needs beside a code: its headers, or where it has another status. */
const NOTES: Partial<Record<ErrorCode, string>> = {
  invalid_code: '401 for a wrong code at sign-in, TOTP or recovery code alike; 400 at enrolment',
  method_not_allowed: 'with `Allow`',
  too_many_attempts: 'with `Retry-After`',
  internal_error: 'never with internals',
};

/** The list, one line per status: `- 409 \`already_exists\`, \`conflict\``. */
export function errorCodesMarkdown(): string {
  const byStatus = new Map<number, string[]>();
  for (const [code, status] of Object.entries(ERROR_STATUS) as [ErrorCode, number][]) {
    const note = NOTES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), `\`${code}\`${note ? ` (${note})` : ''}`]);
  }
  return [...byStatus.entries()].sort(([a], [b]) => a - b).map(([status, codes]) => `  - ${status} ${codes.join(', ')}`).join('\n');
}

/** The guide with its list rewritten. */
export function withErrorCodes(guide: string): string {
  const start = guide.indexOf(LIST_START);
  const end = guide.indexOf(LIST_END);
  if (start < 0 || end < start) throw new Error(`docs/api.md has no ${LIST_START} … ${LIST_END}`);
  return `${guide.slice(0, start + LIST_START.length)}\n${errorCodesMarkdown()}\n  ${guide.slice(end)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) writeFileSync(GUIDE, withErrorCodes(readFileSync(GUIDE, 'utf8')));
