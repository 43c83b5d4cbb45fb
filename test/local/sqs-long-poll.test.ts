/**
 * local-aws-sqs 2.0.2's long poll answered only once it held MaxNumberOfMessages, or at the end of
 * WaitTimeSeconds: a receive that found fewer kept them hidden until then, where SQS answers as soon
 * as it has a message (no upstream issue; LocalStack had the same bug, localstack/localstack#6118).
 * The flow worker's pollers ask for 10 with a 1 s wait, so each event of a trigger sending a few a
 * second waited most of that second before its flow ran. `patches/local-aws-sqs+2.0.2.patch`
 * answers once a message is held; these receives wait 20 s, so the unpatched engine fails them.
 */
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LOCAL_AWS_ENV, startEngines, type Engines } from '../../local/engines.js';

/** Far under the 20 s the receives may wait, far over what an answer takes on a loaded machine. */
const PROMPT_MS = 10_000;
const WAIT_SECONDS = 20;

let engines: Engines;
let sqs: SQSClient;
beforeAll(async () => {
  engines = await startEngines({ flowsDirs: [], visibilityTimeoutSeconds: 30, stepFunctions: false });
  sqs = new SQSClient({ region: LOCAL_AWS_ENV.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, endpoint: engines.env.AWS_ENDPOINT_URL_SQS });
});
afterAll(async () => {
  sqs?.destroy();
  await engines?.stop();
});

const receive = (queueUrl: string) => sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: WAIT_SECONDS }));

it('a long poll for 10 messages answers with the fewer the queue holds, without waiting out WaitTimeSeconds', async () => {
  const queueUrl = engines.queueUrls.flowEvents;
  await Promise.all(['one', 'two', 'three'].map((body) => sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }))));
  const started = Date.now();
  const { Messages = [] } = await receive(queueUrl);
  expect(Date.now() - started).toBeLessThan(PROMPT_MS);
  expect(Messages.map((m) => m.Body).sort()).toEqual(['one', 'three', 'two']);
});

it('a long poll on an empty queue answers when a message arrives, with that message', async () => {
  const queueUrl = engines.queueUrls.kvSweep;
  const polling = receive(queueUrl);
  const started = Date.now();
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'arrived' }));
  const { Messages = [] } = await polling;
  expect(Date.now() - started).toBeLessThan(PROMPT_MS);
  expect(Messages.map((m) => m.Body)).toEqual(['arrived']);
});
