import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCodesMarkdown, GUIDE, LIST_END, LIST_START, withErrorCodes } from '../../bin/error-codes.js';
import { ERROR_STATUS } from '../../functions/shared/errors.js';

describe("the error codes of docs/api.md", () => {
  const readme = readFileSync(GUIDE, 'utf8');

  it('are written from the one error type (npm run docs:errors rewrites nothing)', () => {
    expect(withErrorCodes(readme)).toBe(readme);
  });

  it('list every code the product answers, each once, with its status, and no other', () => {
    const block = readme.slice(readme.indexOf(LIST_START) + LIST_START.length, readme.indexOf(LIST_END));
    const listed = [...block.matchAll(/^\s*- (\d{3}) (.*)$/gm)].flatMap(([, status, codes]) =>
      [...codes!.replace(/\([^)]*\)/g, '').matchAll(/`([a-z_]+)`/g)].map(([, code]) => [code, Number(status)]));
    expect(Object.fromEntries(listed)).toEqual(ERROR_STATUS);
    expect(listed).toHaveLength(Object.keys(ERROR_STATUS).length);
    for (const code of ['mfa_required', 'precondition_failed', 'range_not_satisfiable', 'forbidden']) expect(errorCodesMarkdown()).toContain(`\`${code}\``);
  });
});
