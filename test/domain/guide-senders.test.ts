import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { GUIDE, sendersGuide } from '../../bin/senders-table.js';
import { SENDERS } from '../../functions/domain/webhooks/senders/catalog.js';

describe('docs/senders.md: the senders guide', () => {
  it('is the catalog\'s, as `npm run docs:senders` writes it: no sender is listed by hand', () => {
    const readme = readFileSync(GUIDE, 'utf8');
    expect(readme).toBe(sendersGuide());
    for (const row of SENDERS) expect(readme, row.id).toContain(`| \`${row.id}\` |`);
  });
});
