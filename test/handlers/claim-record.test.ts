import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoExecutionStore, shardOf } from '../../functions/adapters/aws/dynamo-execution-store.js';
import { keyedOnClaim } from '../../functions/domain/webhooks/receiver/claim-record.js';
import type { ReceivedEvent } from '../../functions/domain/webhooks/receiver/events.js';
import { newExecutionId, receivedAtOf } from '../../functions/domain/flows/execution-id.js';
import type { StoredRequest } from '../../functions/domain/flows/ports.js';
import { replayClaim, signedTimeOfClaim } from '../../functions/domain/webhooks/replay-key.js';
import { customRow, senderRow } from '../../functions/domain/webhooks/senders/catalog.js';
import type { SenderRow } from '../../functions/domain/webhooks/senders/catalog-types.js';
import { signStripe } from '../support/signers.js';
import { useEngines } from '../support/engines.js';

/** A delivery's record as its replay claim (`recordFirst`, `keyedOnClaim`), against the embedded DynamoDB. */
const local = useEngines();
const store = () => new DynamoExecutionStore(local.dynamo, local.engines.env.EXECUTIONS_TABLE!, Date.now);
const REQUEST: StoredRequest = { method: 'POST', headers: { 'content-type': 'application/json' }, query: {}, body: '{"id":"evt_1"}', body_encoding: 'utf8', body_bytes: 14 };
const TRIGGER = 'c'.repeat(32);
const record = { event_id: 'evt_1', received_at: new Date().toISOString(), status: 'queued' as const, attempts: 0 };

describe('recordFirst', () => {
  it('writes the record and its request once; a second write under the same ref is refused and changes neither', async () => {
    const ref = { triggerId: TRIGGER, executionId: newExecutionId(Date.now(), 'kfirst') };
    expect(await store().recordFirst(ref, record, REQUEST)).toBe(true);
    expect(await store().recordFirst(ref, { ...record, event_id: 'evt_other' }, { ...REQUEST, headers: { 'x-forged': '1' } })).toBe(false);
    const stored = await store().get(ref);
    expect(stored).toMatchObject({ event_id: 'evt_1', status: 'queued' });
    expect(stored?.request?.headers).toEqual(REQUEST.headers);
  });

  it('discarding the record gives the claim back (a delivery the queue refused may be sent again)', async () => {
    const ref = { triggerId: TRIGGER, executionId: newExecutionId(Date.now(), 'kdiscard') };
    expect(await store().recordFirst(ref, record, REQUEST)).toBe(true);
    await store().discard(ref, record.event_id);
    expect(await store().recordFirst(ref, record, REQUEST)).toBe(true);
  });

  it('an expired record not yet deleted (TTL deletion is lazy) is no claim', async () => {
    const ref = { triggerId: TRIGGER, executionId: newExecutionId(Date.now(), 'kexpired') };
    expect(await store().recordFirst(ref, record, REQUEST)).toBe(true);
    const found = await local.dynamo.send(new QueryCommand({
      TableName: local.engines.env.EXECUTIONS_TABLE!, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `TRIGGER#${TRIGGER}#${shardOf(ref.executionId)}` },
    }));
    const item = found.Items!.find((i) => i.execution_id === ref.executionId)!;
    await local.dynamo.send(new PutCommand({ TableName: local.engines.env.EXECUTIONS_TABLE!, Item: { ...item, expires_at: Math.floor(Date.now() / 1000) - 1 } }));
    expect(await store().recordFirst(ref, record, REQUEST)).toBe(true);
  });
});

describe('keyedOnClaim', () => {
  const row = senderRow('stripe')!;
  const received = (body: string, timestamp: number) => {
    const headers = signStripe({ secret: 'whsec_x', body, timestamp }) as Record<string, string>;
    return { rawBody: Buffer.from(body), headers, url: 'https://example.test/webhooks/x', method: 'POST', body: { kind: 'json' as const, value: JSON.parse(body) as unknown } };
  };
  const eventOf = (request: ReturnType<typeof received>, ownId: string): ReceivedEvent => ({
    ref: { triggerId: TRIGGER, executionId: ownId },
    data: { event_id: 'evt_1' } as ReceivedEvent['data'],
    execution: { event_id: 'evt_1', received_at: new Date().toISOString() },
    stored: REQUEST,
    claim: replayClaim(row, false, request, 'evt_1'),
    claimSignedAtMs: signedTimeOfClaim(row, false, replayClaim(row, false, request, 'evt_1'), request),
    spentFirst: false,
  });
  const body = '{"id":"evt_1","type":"invoice.paid"}';

  it('a replay of the same signed bytes gets the same ref, whenever it comes; its own id is kept for a duplicate', () => {
    const at = 1_795_817_000;
    const first = keyedOnClaim(eventOf(received(body, at), newExecutionId(Date.now(), 'aaaa')));
    const replay = keyedOnClaim(eventOf(received(body, at), newExecutionId(Date.now() + 60_000, 'bbbb')));
    expect(replay.ref).toEqual(first.ref);
    expect(receivedAtOf(first.ref.executionId)).toBe(new Date(at * 1000).toISOString());
    expect(replay.recordIsClaim?.otherRef.executionId).toMatch(/bbbb$/);
  });

  it('a retry signed anew (another timestamp) or another body gets another ref', () => {
    const at = 1_795_817_000;
    const first = keyedOnClaim(eventOf(received(body, at), 'x')).ref;
    expect(keyedOnClaim(eventOf(received(body, at + 60), 'x')).ref).not.toEqual(first);
    expect(keyedOnClaim(eventOf(received(body.replace('paid', 'sent'), at), 'x')).ref).not.toEqual(first);
  });

  it('a deduplicating trigger keeps its claim item (a key without the timestamp, held for a day)', () => {
    const event = eventOf(received(body, 1_795_817_000), 'own');
    const request = received(body, 1_795_817_000);
    const claim = replayClaim(row, true, request, 'evt_1');
    const deduplicating = { ...event, claim, claimSignedAtMs: signedTimeOfClaim(row, true, claim, request) };
    expect(deduplicating.claimSignedAtMs).toBeUndefined();
    expect(keyedOnClaim(deduplicating)).toBe(deduplicating);
  });

  it('a row whose timestamp is checked but not signed keys nothing on it: an attacker could change it to change the key', () => {
    const stripe = row.verification as Extract<SenderRow['verification'], { primitive: 'hmac' }>;
    const unsignedTime = customRow({ ...stripe, content: [{ part: 'body' }] });
    const request = received(body, 1_795_817_000);
    const claim = replayClaim(unsignedTime, false, request, 'evt_1');
    expect(claim?.key).toMatch(/^sha256:/);
    expect(signedTimeOfClaim(unsignedTime, false, claim, request)).toBeUndefined();
  });
});
