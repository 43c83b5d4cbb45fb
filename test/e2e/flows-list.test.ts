import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listFlowNames } from '../../lib/flow-files.js';
import { call, useLocalStack } from '../support/local-stack.js';

describe('GET /flows', () => {
  const stack = useLocalStack();

  it('lists the deployed flows a trigger may run, to a caller with a token or an API key', async () => {
    const token = await stack.token('flows-user');
    const listed = await call(stack, 'GET', '/flows', { token });
    expect(listed.status).toBe(200);
    // Exactly the flows/ folder's definitions, sorted.
    expect(listed.json).toEqual({ data: { flows: listFlowNames(resolve(import.meta.dirname, '../../flows')) } });
    const apiKey = (await call(stack, 'POST', '/api-keys', { token })).json.data.api_key as string;
    expect((await call(stack, 'GET', '/flows', { apiKey })).json).toEqual(listed.json);
    // Every flow listed is one a trigger can name.
    for (const flow of listed.json.data.flows) expect((await call(stack, 'POST', '/triggers', { token, body: { flow } })).status).toBe(201);
  });

  it('is 401 without credentials', async () => {
    const denied = await call(stack, 'GET', '/flows');
    expect(denied.status).toBe(401);
    expect(denied.json).toEqual({ error: 'unauthorized' });
  });
});
