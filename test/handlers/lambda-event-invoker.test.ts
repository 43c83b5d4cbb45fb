import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LambdaEventInvoker } from '../../functions/adapters/aws/lambda-event-invoker.js';
import { retryOfDestinationRecord } from '../../functions/domain/flows/direct-retry.js';
import { startLambdaInvokeEmulator, type LambdaInvokeEmulator } from '../../local/lambda-invoke-server.js';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const arn = (name: string) => `arn:aws:lambda:us-east-1:000000000000:function:${name}`;
const MESSAGE = { v: 1, trigger_id: 't', flow: 'echo', ref: { triggerId: 't', executionId: '20260101T000000000Z_x' }, input: { trigger: { event: {} } } };

let emulator: LambdaInvokeEmulator;
const ran: unknown[] = [];
const failures: string[] = [];
const settled: string[] = [];
let waiters: (() => void)[] = [];
const settledOnce = () => new Promise<void>((done) => waiters.push(done));

beforeAll(async () => {
  emulator = await startLambdaInvokeEmulator({ region: 'us-east-1', credentials });
  const fn = (fails: boolean) => ({
    handler: async (payload: unknown) => {
      ran.push(payload);
      if (fails) throw new Error('Task timed out after 60.00 seconds');
    },
    context: () => ({ invokedFunctionArn: arn(fails ? 'crashes' : 'worker') }) as Context,
    onFailure: async (record: string) => void failures.push(record),
    onSettled: (id: string) => {
      settled.push(id);
      const now = waiters;
      waiters = [];
      now.forEach((done) => done());
    },
  });
  emulator.serve('worker', fn(false));
  emulator.serve('crashes', fn(true));
});
afterAll(async () => emulator?.stop());

const invoker = (name: string, secret = 'local') => new LambdaEventInvoker(arn(name), { endpoint: emulator.endpoint, credentials: async () => ({ ...credentials, secretAccessKey: secret }) });

describe('LambdaEventInvoker against the local Invoke emulator', () => {
  it('a signed Event invocation is taken (202) and the handler runs with the payload after the answer', async () => {
    const done = settledOnce();
    await invoker('worker').invoke(JSON.stringify(MESSAGE));
    await done;
    expect(ran.at(-1)).toEqual(MESSAGE);
  });

  it('a handler that throws sends Lambda\'s destination record, which reads back as the retry', async () => {
    const done = settledOnce();
    await invoker('crashes').invoke(JSON.stringify(MESSAGE));
    await done;
    const record = failures.at(-1)!;
    expect(JSON.parse(record)).toMatchObject({ requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 1 }, requestPayload: MESSAGE, responsePayload: { errorMessage: 'Task timed out after 60.00 seconds' } });
    expect(JSON.parse(retryOfDestinationRecord(record)!)).toEqual({ ...MESSAGE, attempts_before: 1, direct_attempts: 1 });
  });

  it('an unknown function, a wrong secret and an endpoint that is down each throw, so the receiver falls back to the queue', async () => {
    await expect(invoker('missing').invoke('{}')).rejects.toThrow(/answered 404/);
    await expect(invoker('worker', 'wrong').invoke('{}')).rejects.toThrow(/answered 403/);
    await expect(new LambdaEventInvoker(arn('worker'), { endpoint: 'http://127.0.0.1:1', credentials: async () => credentials }).invoke('{}')).rejects.toThrow();
  });

  it('takes its region from the ARN, and refuses an ARN that names none', () => {
    expect(() => new LambdaEventInvoker('flowWorker', { credentials: async () => credentials })).toThrow(/no region/);
    expect(() => new LambdaEventInvoker('arn:aws:lambda:eu-west-1:123456789012:function:w', { credentials: async () => credentials })).not.toThrow();
  });
});
