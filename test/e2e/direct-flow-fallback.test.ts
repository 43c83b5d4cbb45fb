import { describe, expect, it } from 'vitest';
import { useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

/** Every flow worker invocation's kind. */
const kinds: string[] = [];

// The receiver is told of a flow worker Lambda does not have: every direct invocation is refused (404).
const stack = useLocalStack({
  flowsDir: TEST_FLOWS_DIR,
  env: { FLOW_WORKER_FUNCTION: 'arn:aws:lambda:us-east-1:000000000000:function:missing' },
  aroundInvocation: async (fn, event, invoke) => {
    if (fn === 'flowWorker') kinds.push((event as { Records?: unknown }).Records ? 'batch' : 'direct');
    return invoke();
  },
});

describe('a direct invocation that fails', () => {
  it('falls back to the flow queue before the 200, and the event runs from there', async () => {
    const token = await stack.token('fallback-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo' });
    const res = await deliver(trigger.url, JSON.stringify({ id: 'evt_fallback' }));
    expect(res.json).toEqual({ status: 'accepted', event_id: 'evt_fallback' });
    const [execution] = await waitForExecutions(stack, token, trigger.id, (e) => e[0]?.status === 'succeeded');
    expect(execution).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(kinds).toEqual(['batch']);
  });
});
