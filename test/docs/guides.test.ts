import { describe, expect, it } from 'vitest';
import { examples, jsonValues, mismatch } from './guides.js';

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
