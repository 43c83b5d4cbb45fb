/**
 * Search maintenance on the local stack as deployed: a write schedules a job on the FIFO queue
 * (debounced by its deduplication id: one per index and window), the queue's poller runs the
 * maintenance function, which brings the full-text index up to date; a purge's job sweeps the old
 * generation. Before the job, the write is found all the same (rows not yet indexed are searched flat).
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { sqsClient } from '../../functions/adapters/aws/clients/sqs.js';
import { SEARCH_MAINTENANCE_WINDOW_SECONDS } from '../../functions/manifest.js';
import { call, useLocalStack } from '../support/local-stack.js';

/** The maintenance jobs the stack's poller delivered, each once (a redelivery has its message id again). */
const delivered = new Map<string, { index: string; kind: string }>();
const stack = useLocalStack({
  aroundInvocation: (fn, event, invoke) => {
    if (fn === 'searchMaintenance') {
      for (const record of (event as SQSEvent).Records) delivered.set(record.messageId, decode(record.body));
    }
    return invoke();
  },
});
const SETTINGS = { searchable_fields: ['text'] };
const decode = (body: string) => {
  const { index, kind } = JSON.parse(body) as { index: string; kind: string };
  return { index, kind };
};

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Jobs on the maintenance queue: waiting out its delay, ready, or running. */
async function queuedJobs(): Promise<number> {
  const { Attributes } = await sqsClient(stack.aws).send(new GetQueueAttributesCommand({
    QueueUrl: stack.queueUrls.searchMaintenance,
    AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed', 'ApproximateNumberOfMessagesNotVisible'],
  }));
  return Number(Attributes!.ApproximateNumberOfMessages) + Number(Attributes!.ApproximateNumberOfMessagesDelayed) + Number(Attributes!.ApproximateNumberOfMessagesNotVisible);
}

// Each test has an index of its own and mostly waits out the queue's delay: they run side by side.
describe.concurrent('search maintenance through the FIFO queue', () => {
  it('a query right after a write finds it; the queue\'s job then indexes it, with no wait from the writer', async () => {
    const token = await stack.token('maintenance-user');
    const base = '/storage/search/notes';
    expect((await call(stack, 'PUT', base, { token, body: SETTINGS })).status).toBe(201);
    const write = await call(stack, 'PUT', `${base}/documents/n1`, { token, body: { text: 'a freshly written note' } });
    expect(write.json.data).toEqual({ id: 'n1', indexed: false });
    const found = await call(stack, 'POST', `${base}/query`, { token, body: { q: 'freshly' } });
    expect(found.json.data.hits.map((h: { id: string }) => h.id)).toEqual(['n1']);
    // The job runs after the queue's delay (the window), then the index covers the write.
    await waitFor('pending_documents', async () => (await call(stack, 'GET', base, { token })).json.data.pending_documents, (n) => n === 0, 90_000);
    // Typo matches see indexed rows only: now they find it.
    const typo = await call(stack, 'POST', `${base}/query`, { token, body: { q: 'freshlu', typo_tolerance: true } });
    expect(typo.json.data.hits.map((h: { id: string }) => h.id)).toEqual(['n1']);
  }, 120_000);

  it('many writes to one index in a window make one job (the deduplication id is the debounce)', async () => {
    const token = await stack.token('debounce-user');
    const base = '/storage/search/burst';
    expect((await call(stack, 'PUT', base, { token, body: SETTINGS })).status).toBe(201);
    const window = (ms: number) => Math.floor(ms / (SEARCH_MAINTENANCE_WINDOW_SECONDS * 1000));
    const first = Date.now();
    for (let i = 0; i < 10; i++) expect((await call(stack, 'PUT', `${base}/documents/d${i}`, { token, body: { text: `burst ${i}` } })).status).toBe(200);
    const last = Date.now();
    await waitFor('pending_documents', async () => (await call(stack, 'GET', base, { token })).json.data.pending_documents, (n) => n === 0, 90_000);
    // Every job the writes made has run once the queue holds none (the other tests' jobs come within the same delay).
    await waitFor('an empty queue', queuedJobs, (n) => n === 0, 90_000);
    const jobs = [...delivered.values()].filter((job) => job.index === 'burst' && job.kind === 'index').length;
    expect(jobs).toBeGreaterThanOrEqual(1);
    expect(jobs).toBeLessThanOrEqual(window(last) - window(first) + 1);
  }, 240_000);

  it('a purge\'s job sweeps the old generation; documents written after the purge stay', async () => {
    const token = await stack.token('sweep-user');
    const base = '/storage/search/swept';
    expect((await call(stack, 'PUT', base, { token, body: SETTINGS })).status).toBe(201);
    expect((await call(stack, 'POST', `${base}/documents`, { token, body: { documents: [{ id: 'old', text: 'before' }] } })).status).toBe(200);
    expect((await call(stack, 'DELETE', `${base}/purge`, { token })).status).toBe(200);
    expect((await call(stack, 'PUT', `${base}/documents/new`, { token, body: { text: 'after' } })).status).toBe(200);
    await waitFor('an empty queue', queuedJobs, (n) => n === 0, 90_000);
    const after = await call(stack, 'POST', `${base}/query`, { token, body: { q: 'after before', match: 'any' } });
    expect(after.json.data.hits.map((h: { id: string }) => h.id)).toEqual(['new']);
    expect((await call(stack, 'GET', base, { token })).json.data).toMatchObject({ documents: 1, pending_documents: 0 });
  }, 240_000);
});
