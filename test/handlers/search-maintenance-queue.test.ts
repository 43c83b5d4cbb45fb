/**
 * SqsSearchMaintenance against local-aws-sqs's FIFO queue (the local stack's, as deployed): one
 * message group per index, and a deduplication id per index, kind, generation and window, so that
 * jobs sent in one window are one job.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { maintenanceGroupOf, SqsSearchMaintenance } from '../../functions/adapters/aws/sqs-search-maintenance.js';
import { QUEUES, SEARCH_MAINTENANCE_WINDOW_SECONDS } from '../../functions/manifest.js';
import { useEngines } from '../support/engines.js';

const t = useEngines();
const WINDOW_MS = SEARCH_MAINTENANCE_WINDOW_SECONDS * 1000;

describe('SqsSearchMaintenance', () => {
  it('sends one job per index, kind and generation in a window; another window, generation or kind is another job', async () => {
    const queueUrl = t.engines.env[QUEUES.searchMaintenance.env]!;
    let now = 1_900_000_000_000 - (1_900_000_000_000 % WINDOW_MS);
    const queue = new SqsSearchMaintenance(t.sqs, queueUrl, { windowSeconds: SEARCH_MAINTENANCE_WINDOW_SECONDS, now: () => now });
    const job = { accountId: 'acct', name: 'books', generation: 1, kind: 'index' as const };
    for (let i = 0; i < 5; i++) {
      await queue.schedule(job);
      now += 1000;
    }
    // Still the same window (5 s of 10): the four later sends were dropped as duplicates.
    await queue.schedule({ ...job, kind: 'sweep' });
    await queue.schedule({ ...job, generation: 2 });
    now += WINDOW_MS;
    await queue.schedule(job);
    // The queue delays each job by the window: receive until all four have come.
    const bodies: { body: string; group?: string }[] = [];
    for (const deadline = Date.now() + 60_000; bodies.length < 4 && Date.now() < deadline;) {
      const { Messages } = await t.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, AttributeNames: ['All'] }));
      for (const m of Messages ?? []) bodies.push({ body: m.Body!, group: m.Attributes?.MessageGroupId });
    }
    expect(bodies.map((b) => JSON.parse(b.body))).toEqual([
      { account: 'acct', index: 'books', generation: 1, kind: 'index' },
      { account: 'acct', index: 'books', generation: 1, kind: 'sweep' },
      { account: 'acct', index: 'books', generation: 2, kind: 'index' },
      { account: 'acct', index: 'books', generation: 1, kind: 'index' },
    ]);
    expect(new Set(bodies.map((b) => b.group))).toEqual(new Set([maintenanceGroupOf(job)]));
  }, 90_000);

  it('names an index\'s group by a hash of its account and its name: two accounts\' indexes of one name are two groups', () => {
    const a = maintenanceGroupOf({ accountId: 'a', name: 'books' });
    expect(a).toMatch(/^[0-9a-f]{32}\.books$/);
    expect(maintenanceGroupOf({ accountId: 'b', name: 'books' })).not.toBe(a);
  });
});
