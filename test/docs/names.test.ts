import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NAMED_SENDERS } from '../../bin/senders-table.js';
import { guidePaths, ROOT } from './guides.js';
import { brokenLinks, missingFiles, unknownNames } from './names.js';

describe('the docs name only what exists', () => {
  for (const guide of guidePaths()) {
    const text = readFileSync(resolve(ROOT, guide), 'utf8');
    it(`${guide}: every route, setting and sender it names is in the route table, the settings or the catalog`, () => {
      expect(unknownNames(text)).toEqual([]);
    });
    it(`${guide}: every link to a file or a heading leads somewhere, and every file it names is there`, () => {
      expect(brokenLinks(guide, text)).toEqual([]);
      expect(missingFiles(text)).toEqual([]);
    });
  }

  it('the README counts the catalog\'s senders', () => {
    expect(readFileSync(resolve(ROOT, 'README.md'), 'utf8')).toContain(`[${NAMED_SENDERS} senders](docs/senders.md)`);
  });
});

describe('the names check itself', () => {
  it('finds a route, a setting and a sender that do not exist', () => {
    const text = [
      '`GET /storage/kv/{bucket}` and `PUT|GET /storage/kv/{bucket}/value?key={key}` exist; `POST …/consumers/{name}/fetch` too.',
      'curl -s "$FLOWGATE_URL/storage/kv/settings/value?key=a" and "$FLOWGATE_URL/triggers/$TRIGGER_ID/replay"',
      '`WAIT_TIMEOUT_MS` and context `waitTimeoutMs`, `-c flowWorkerMaxConcurrency=5`, `apiThrottleRateLimit`; "service": "stripe"',
    ].join('\n');
    expect(unknownNames(text)).toEqual([]);
    const stale = [
      '`GET /storage/kv/{bucket}/items`, `PATCH /storage/kv/{bucket}`',
      'curl -s "$FLOWGATE_URL/storage/buckets/settings"',
      '`WAIT_TIMEOUT_SECONDS`, context `waitTimeoutSeconds`, `-c nope=1`, `NOPE_URL=x npm start`',
      '{"signature": {"service": "stripey", "secret": "x"}}',
    ].join('\n');
    expect(unknownNames(stale)).toEqual([
      'route GET /storage/kv/{bucket}/items', 'route PATCH /storage/kv/{bucket}', 'route /storage/buckets/settings',
      'context waitTimeoutSeconds', 'context nope', 'setting NOPE_URL', 'setting WAIT_TIMEOUT_SECONDS', 'sender stripey',
    ]);
  });

  it('finds a file that is not there', () => {
    expect(missingFiles('`functions/domain/kv/service.ts`, `functions/domain/kv/nowhere.ts`, `test/e2e/console*.test.ts`')).toEqual(['functions/domain/kv/nowhere.ts']);
  });

  it('finds a link to a heading that is not there', () => {
    expect(brokenLinks('docs/kv.md', '[a](objects.md#how-it-works) [b](objects.md#nowhere) [c](missing.md)')).toEqual(['objects.md#nowhere', 'missing.md']);
  });
});
