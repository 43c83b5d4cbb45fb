import { describe, expect, it } from 'vitest';
import { examples, jsonValues, mismatch, NOT_RUNNABLE } from './guides.js';
import { SPECIFIERS, tsExamples, tsProgram } from './typescript.js';

const guide = [
  'Text.',
  '```sh',
  'curl -s "$FLOWGATE_URL/health"',
  '```',
  '',
  '```json',
  '{"status": "ok"}',
  '```',
  '<!-- not-runnable -->',
  '',
  '```sh',
  'npx cdk deploy',
  '```',
  '```ts',
  'const a = 1;',
  '```',
  '```sh',
  'echo done',
  '```',
  'Words between.',
  '```json',
  '{"not": "an answer"}',
  '```',
].join('\n');

describe('examples(guide, text): the runnable blocks of a guide', () => {
  it('takes ```sh blocks in order, skips those marked not-runnable, and pairs each with the ```json block right after it', () => {
    expect(examples('x.md', guide)).toEqual([
      { guide: 'x.md', line: 2, code: 'curl -s "$FLOWGATE_URL/health"', expected: '{"status": "ok"}' },
      { guide: 'x.md', line: 17, code: 'echo done' },
    ]);
  });
});

describe('jsonValues(text): what a block printed', () => {
  it('finds JSON values printed back to back, between lines of text', () => {
    expect(jsonValues('{"a":1}{"b":[2]}\nplain text\n[3] {not json} {"c":"}"}')).toEqual([{ a: 1 }, { b: [2] }, [3], { c: '}' }]);
  });
});

describe('mismatch(expected, actual): the json block against the answer', () => {
  it('accepts more fields than shown, "…" for any value and … inside a string for any text', () => {
    expect(mismatch({ data: { id: '…', url: 'http://127.0.0.1:…/webhooks/…' } }, { data: { id: 'x', url: 'http://127.0.0.1:3000/webhooks/abc', more: 1 } })).toBeUndefined();
    expect(mismatch([1, '…'], [1, 2, 3])).toBeUndefined();
  });

  it('names the first field that differs or is missing, and arrays of another length', () => {
    expect(mismatch({ data: { revision: 1 } }, { data: { revision: 2 } })).toBe('$.data.revision: 2 is not 1');
    expect(mismatch({ data: { key: '…' } }, { data: {} })).toBe('$.data.key: missing');
    expect(mismatch({ keys: ['a'] }, { keys: ['a', 'b'] })).toBe('$.keys: 2 elements, 1 shown');
    expect(mismatch({ error: 'forbidden' }, [])).toBe('$: [] is not an object');
  });
});

describe('tsExamples(guide, text) and tsProgram(examples): the ```ts blocks as one program', () => {
  const text = [
    '```ts',
    "import { createClient } from '@flowgate/client';",
    'const answer = 42;',
    'answer; // → 42',
    '```',
    '```json',
    '{"a": 1}',
    '```',
    NOT_RUNNABLE,
    '```ts',
    'never();',
    '```',
    '```ts',
    "import { createClient, FlowgateError } from '@flowgate/client';",
    "import type { Trigger } from '@flowgate/client';",
    'const answer = 43;',
    '```',
  ].join('\n');

  it('takes the ```ts blocks not marked not-runnable, each with the ```json block right after it', () => {
    expect(tsExamples('x.md', text).map(({ line, expected }) => ({ line, expected }))).toEqual([{ line: 1, expected: '{"a": 1}' }, { line: 13 }]);
  });

  it('hoists and merges the imports, points @flowgate/client at client/src, and gives each block its own scope', () => {
    const program = tsProgram(tsExamples('x.md', text));
    const imports = program.split('\n').filter((line) => line.startsWith('import '));
    expect(imports[0]).toBe(`import { createClient, FlowgateError, createClient as __createClient } from ${JSON.stringify(SPECIFIERS['@flowgate/client'])};`);
    expect(program).not.toContain("'@flowgate/client'");
    expect(program.match(/const answer/g)).toHaveLength(2);
    expect(program).toContain('__expect("x.md:4", __value, "42")');
    expect(program).not.toContain('never()');
  });
});
