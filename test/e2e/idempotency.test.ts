import { randomUUID } from 'node:crypto';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';
import { epochSeconds } from '../../functions/domain/clock.js';
import { fingerprintOf, IDEMPOTENCY_WINDOW_SECONDS, IN_FLIGHT_LOCK_SECONDS, recordId } from '../../functions/domain/idempotency.js';
import { ROUTES, TABLES } from '../../functions/manifest.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { TEST_FLOWS_DIR } from '../support/webhooks.js';

/**
 * `Idempotency-Key` over HTTP. The trigger routes read the stack's clock, which a test moves
 * forward to pass the 24-hour window. Threats: a stolen key sent by another credential reaches
 * nothing; the table holds neither the key nor, in clear, an answer's secret; a hostile key is a
 * 400 and costs one header check.
 */
const ahead = { ms: 0 };
const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, now: () => Date.now() + ahead.ms });

const withKey = (key: string) => ({ 'idempotency-key': key });
const trigger = { flow: 'echo', name: 'idempotent' };

async function triggerCount(token: string) {
  return (await call(stack, 'GET', '/triggers?limit=500', { token })).json.data.triggers.length as number;
}

/** Every idempotency record in a table, as stored. */
async function records(table: string) {
  const { Items } = await dynamoClient(stack.aws).send(new ScanCommand({ TableName: table }));
  return (Items ?? []).filter((item) => String(item.pk).startsWith('IDEMPOTENCY#'));
}

/** The table names the stack's handlers were given. */
const tables = () => ({ authTable: stack.engines.env[TABLES.auth.env]!, triggersTable: stack.engines.env[TABLES.triggers.env]! });

describe('Idempotency-Key', () => {
  it('a retried POST /triggers with the same key and body answers the first 201 again, marked replayed, and creates one trigger', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    const key = randomUUID();
    const first = await call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey(key) });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey(key) });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(again.json.data.api_key).toBe(first.json.data.api_key);
    expect(await triggerCount(token)).toBe(1);
  });

  it('the same key with another body is 409 idempotency_key_reused, and creates nothing', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    const key = randomUUID();
    expect((await call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey(key) })).status).toBe(201);
    const other = await call(stack, 'POST', '/triggers', { token, body: { ...trigger, name: 'another' }, headers: withKey(key) });
    expect(other.status).toBe(409);
    expect(other.json.error).toBe('idempotency_key_reused');
    expect(other.json.message).toContain('Idempotency-Key');
    expect(await triggerCount(token)).toBe(1);
  });

  it('without a key, each POST creates (nothing changes for callers that send none)', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    for (let i = 0; i < 2; i += 1) expect((await call(stack, 'POST', '/triggers', { token, body: trigger })).status).toBe(201);
    expect(await triggerCount(token)).toBe(2);
  });

  it('threat: a stolen key sent by another credential (another user, or an API key of the same account) replays nothing and reveals no secret', async () => {
    const account = `acct-${randomUUID()}`;
    const owner = await stack.token('owner', { accountId: account });
    const colleague = await stack.token('colleague', { accountId: account });
    const key = randomUUID();
    const first = await call(stack, 'POST', '/triggers', { token: owner, body: trigger, headers: withKey(key) });
    const minted = await call(stack, 'POST', '/api-keys', { token: owner, body: { scopes: ['triggers'] } });
    for (const credential of [{ token: colleague }, { apiKey: minted.json.data.api_key as string }]) {
      const stolen = await call(stack, 'POST', '/triggers', { ...credential, body: trigger, headers: withKey(key) });
      expect(stolen.status).toBe(201);
      expect(stolen.headers.get('idempotent-replayed')).toBeNull();
      expect(stolen.json.data.id).not.toBe(first.json.data.id);
      expect(stolen.text).not.toContain(first.json.data.api_key);
    }
  });

  it('threat: the table keeps neither the key nor a new API key in clear, and the replay still shows the key', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    const key = `key-${randomUUID()}`;
    const first = await call(stack, 'POST', '/api-keys', { token, body: { scopes: ['storage'] }, headers: withKey(key) });
    expect(first.status).toBe(201);
    const again = await call(stack, 'POST', '/api-keys', { token, body: { scopes: ['storage'] }, headers: withKey(key) });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.data.api_key).toBe(first.json.data.api_key);
    expect((await call(stack, 'GET', '/api-keys', { token })).json.data.api_keys).toHaveLength(1);
    const stored = JSON.stringify(await records(tables().authTable));
    expect(stored).toContain('IDEMPOTENCY#');
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(first.json.data.api_key);
    expect(stored).not.toContain(first.json.data.id);
  });

  it('a request that fails keeps nothing: the key can be used again', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    const key = randomUUID();
    const bad = await call(stack, 'POST', '/triggers', { token, body: { flow: 'no-such-flow' }, headers: withKey(key) });
    expect(bad.status).toBe(400);
    const good = await call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey(key) });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a key still in flight is 409 idempotency_key_in_flight with Retry-After; once its lock lapses (its function died) the request runs', async () => {
    const subject = `idem-${randomUUID()}`;
    const token = await stack.token(subject);
    const key = randomUUID();
    const body = JSON.stringify(trigger);
    const now = epochSeconds(Date.now());
    const id = recordId({ accountId: subject, subject }, key);
    await dynamoClient(stack.aws).send(new PutCommand({
      TableName: tables().triggersTable,
      Item: {
        pk: `IDEMPOTENCY#${id}`, sk: 'IDEMPOTENCY', state: 'in_flight', locked_until: now + IN_FLIGHT_LOCK_SECONDS, expires_at: now + IDEMPOTENCY_WINDOW_SECONDS,
        fingerprint: fingerprintOf({ operationId: 'createTrigger', path: '/triggers', query: '', body: Buffer.from(body) }),
      },
    }));
    const busy = await call(stack, 'POST', '/triggers', { token, rawBody: body, headers: { ...withKey(key), 'content-type': 'application/json' } });
    expect(busy.status).toBe(409);
    expect(busy.json.error).toBe('idempotency_key_in_flight');
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(await triggerCount(token)).toBe(0);

    ahead.ms = (IN_FLIGHT_LOCK_SECONDS + 1) * 1000;
    try {
      const taken = await call(stack, 'POST', '/triggers', { token, rawBody: body, headers: { ...withKey(key), 'content-type': 'application/json' } });
      expect(taken.status).toBe(201);
      expect(await triggerCount(token)).toBe(1);
    } finally {
      ahead.ms = 0;
    }
  });

  it('threat: five concurrent retries with one key create one trigger; the others are replays or 409 in flight, never a second creation', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 5 }, () => call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey(key) })));
    const fresh = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const answer of answers.filter((a) => !fresh.includes(a))) {
      if (answer.status === 201) expect(answer.json.data.id).toBe(fresh[0]!.json.data.id);
      else expect(answer.json.error).toBe('idempotency_key_in_flight');
    }
    expect(await triggerCount(token)).toBe(1);
  });

  it('after 24 hours the key is forgotten (checked on read: dynalite, like DynamoDB before its sweep, still holds the record)', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    const key = randomUUID();
    const first = await call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey(key) });
    ahead.ms = (IDEMPOTENCY_WINDOW_SECONDS + 1) * 1000;
    try {
      const later = await call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey(key) });
      expect(later.status).toBe(201);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
      expect(later.json.data.id).not.toBe(first.json.data.id);
    } finally {
      ahead.ms = 0;
    }
  });

  it('threat: a hostile key (too long, control characters, empty) is 400 naming the header, and creates nothing', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    for (const key of ['k'.repeat(256), 'a\tb', '']) {
      const res = await call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey(key) });
      expect(res.status, JSON.stringify(key)).toBe(400);
      expect(res.json).toMatchObject({ error: 'validation_error', message: expect.stringContaining('Idempotency-Key') });
    }
    expect(await triggerCount(token)).toBe(0);
    // The longest key is taken.
    expect((await call(stack, 'POST', '/triggers', { token, body: trigger, headers: withKey('k'.repeat(255)) })).status).toBe(201);
  });

  it('a retried stream publish answers the same sequence numbers and stores the messages once', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    expect((await call(stack, 'PUT', '/storage/streams/orders', { token, body: {} })).status).toBe(201);
    const key = randomUUID();
    const body = { messages: [{ data: { n: 1 } }, { data: { n: 2 } }] };
    const first = await call(stack, 'POST', '/storage/streams/orders/messages', { token, body, headers: withKey(key) });
    const again = await call(stack, 'POST', '/storage/streams/orders/messages', { token, body, headers: withKey(key) });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    expect((await call(stack, 'GET', '/storage/streams/orders', { token })).json.data).toMatchObject({ messages: 2 });
  });

  it('a retried upload start answers the same upload (one reservation), in the kv table', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    expect((await call(stack, 'PUT', '/storage/objects/files', { token, body: {} })).status).toBe(201);
    const key = randomUUID();
    const body = { key: 'a.txt', size: 5, content_type: 'text/plain' };
    const first = await call(stack, 'POST', '/storage/objects/files/uploads', { token, body, headers: withKey(key) });
    expect(first.status).toBe(201);
    const again = await call(stack, 'POST', '/storage/objects/files/uploads', { token, body, headers: withKey(key) });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.data.id).toBe(first.json.data.id);
  });

  it('a key on a route that does not honour keys is ignored', async () => {
    const token = await stack.token(`idem-${randomUUID()}`);
    expect(ROUTES.find((r) => r.operationId === 'createKVBucket')?.idempotent).toBeUndefined();
    expect((await call(stack, 'PUT', '/storage/kv/b', { token, body: {}, headers: withKey('not-honoured\t') })).status).toBe(201);
  });
});
