import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpsKeyFetcher } from '../../functions/adapters/https-key-fetcher.js';
import type { KeyFetcher } from '../../functions/domain/webhooks/senders/context.js';
import { signPayPal, signSns, snsNotification, snsSubscriptionConfirmation } from '../support/asymmetric-signers.js';
import { certificateChain, selfSignedCertificate } from '../support/certificates.js';
import { localFetcher, startKeyServer, type KeyServer } from '../support/key-server.js';
import { useLocalStack } from '../support/local-stack.js';
import { createTrigger, deliver, waitForExecutions } from '../support/webhooks.js';

/**
 * Amazon SNS over HTTP on the local stack: SNS posts its JSON as text/plain, signs it with the
 * certificate at SigningCertURL, and asks for a subscription to be confirmed by a GET of its
 * SubscribeURL. AWS's hosts are stood in for by a local HTTPS server (nothing reaches the internet).
 */
const TOPIC = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
const CERT_URL = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-e2e.pem';
const SNS_TEXT = { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'SubscriptionConfirmation' };
/** A test root stands in for the public root AWS's signing certificates chain to. */
const { root, leaf: signer } = certificateChain({ commonName: 'sns.amazonaws.com' });

let server: KeyServer;
let fetcher: (KeyFetcher & { asked: string[] }) | undefined;
const senderKeys: KeyFetcher = { fetchText: (url) => fetcher!.fetchText(url), fetchIssuer: (url) => fetcher!.fetchIssuer!(url), trustedRoots: [root.pem] };
beforeAll(async () => {
  server = await startKeyServer();
  fetcher = localFetcher(server, new HttpsKeyFetcher({ ca: server.ca }));
  server.routes.set('/sns.us-west-2.amazonaws.com/SimpleNotificationService-e2e.pem', { body: signer.pem });
});
afterAll(async () => server?.close());

const stack = useLocalStack({ senderKeys });

describe('aws_sns', () => {
  it('a signed SubscriptionConfirmation is confirmed by a GET of its SubscribeURL, recorded as a handshake, and runs no flow', async () => {
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'aws_sns', secret: TOPIC } });
    const subscribeUrl = `https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=e2e-token`;
    // AWS answers the confirmation with an XML document; the stand-in serves one at that very URL.
    server.routes.set(`/sns.us-west-2.amazonaws.com/${new URL(subscribeUrl).search}`, { body: '<ConfirmSubscriptionResponse/>' });
    const body = signSns(snsSubscriptionConfirmation({ SigningCertURL: CERT_URL, SubscribeURL: subscribeUrl }), signer.privateKey);
    const res = await deliver(trigger.url, body, SNS_TEXT);
    expect(res.status, res.text).toBe(200);
    expect(fetcher!.asked).toContain(subscribeUrl);
    const [recorded] = await waitForExecutions(stack, token, trigger.id, (list) => list.length === 1);
    expect(recorded).toMatchObject({ status: 'handshake', type: 'aws_sns_subscription' });
  });

  it('a signed Notification, posted as text/plain, runs the flow', async () => {
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'aws_sns', secret: TOPIC } });
    const body = signSns(snsNotification({ SigningCertURL: CERT_URL }), signer.privateKey);
    expect((await deliver(trigger.url, body, { ...SNS_TEXT, 'x-amz-sns-message-type': 'Notification' })).status).toBe(200);
    const [execution] = await waitForExecutions(stack, token, trigger.id, (list) => list[0]?.status === 'succeeded');
    expect(execution.status).toBe('succeeded');
  });

  it('a Notification signed by a leaf-only certificate runs the flow: its issuer is fetched from the leaf\'s AIA CA Issuers URI', async () => {
    // As SNS serves it: the leaf alone, issued by an intermediate the trusted roots do not hold.
    const issuerUrl = 'http://crt.r2m01.amazontrust.com/r2m01.cer';
    const intermediate = selfSignedCertificate({ commonName: 'Test Amazon RSA 2048 M01', ca: true, issuer: { certificate: root, commonName: 'Flowgate Test Root CA' } });
    const leaf = selfSignedCertificate({ commonName: 'sns.amazonaws.com', keyPair: signer, issuer: { certificate: intermediate, commonName: 'Test Amazon RSA 2048 M01' }, caIssuers: issuerUrl });
    const certUrl = 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-leaf-only.pem';
    server.routes.set('/sns.us-west-2.amazonaws.com/SimpleNotificationService-leaf-only.pem', { body: leaf.pem });
    server.routes.set('/crt.r2m01.amazontrust.com/r2m01.cer', { body: intermediate.pem });
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'aws_sns', secret: TOPIC } });
    const body = signSns(snsNotification({ SigningCertURL: certUrl }), signer.privateKey);
    const res = await deliver(trigger.url, body, { ...SNS_TEXT, 'x-amz-sns-message-type': 'Notification' });
    expect(res.status, res.text).toBe(200);
    expect(fetcher!.asked).toContain(issuerUrl);
    const [execution] = await waitForExecutions(stack, token, trigger.id, (list) => list[0]?.status === 'succeeded');
    expect(execution.status).toBe('succeeded');
  });

  it('the flow is handed only the fields SNS signs: MessageAttributes and anything added beside the signature are left out', async () => {
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', response_mode: 'wait', signature: { service: 'aws_sns', secret: TOPIC } });
    const signed = JSON.parse(signSns(snsNotification({ SigningCertURL: CERT_URL }), signer.privateKey)) as Record<string, unknown>;
    const body = JSON.stringify({ ...signed, MessageAttributes: { role: { Type: 'String', Value: 'admin' } }, Token: 'added', Amount: 1_000_000 });
    const res = await deliver(trigger.url, body, { ...SNS_TEXT, 'x-amz-sns-message-type': 'Notification' });
    expect(res.status, res.text).toBe(200);
    const { Message, MessageId, Subject, Timestamp, TopicArn, Type } = signed;
    expect(res.json.received).toEqual({ Message, MessageId, Subject, Timestamp, TopicArn, Type });
  });

  it('a Subject that is not a string is 401: it would be left out of the signed string and still reach the flow', async () => {
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'aws_sns', secret: TOPIC } });
    const { Subject: _, ...noSubject } = snsNotification({ SigningCertURL: CERT_URL });
    const body = JSON.stringify({ ...JSON.parse(signSns(noSubject, signer.privateKey)), Subject: { role: 'admin' } });
    expect((await deliver(trigger.url, body, { ...SNS_TEXT, 'x-amz-sns-message-type': 'Notification' })).status).toBe(401);
  });

  it('a certificate at sns.s3.amazonaws.com (an S3 bucket named sns) is refused without a fetch, though named and issued as SNS\'s', async () => {
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'aws_sns', secret: TOPIC } });
    const url = 'https://sns.s3.amazonaws.com/SimpleNotificationService-bucket.pem';
    server.routes.set('/sns.s3.amazonaws.com/SimpleNotificationService-bucket.pem', { body: signer.pem });
    const body = signSns(snsNotification({ SigningCertURL: url }), signer.privateKey);
    expect((await deliver(trigger.url, body, { ...SNS_TEXT, 'x-amz-sns-message-type': 'Notification' })).status).toBe(401);
    expect(fetcher!.asked).not.toContain(url);
  });

  it('a SubscribeURL off SNS\'s hosts is never visited: 401, whatever the message says', async () => {
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'aws_sns', secret: TOPIC } });
    const evil = 'https://attacker.example.com/?Action=ConfirmSubscription';
    const body = signSns(snsSubscriptionConfirmation({ SigningCertURL: CERT_URL, SubscribeURL: evil }), signer.privateKey);
    const res = await deliver(trigger.url, body, SNS_TEXT);
    expect(res.status).toBe(401);
    expect(fetcher!.asked).not.toContain(evil);
  });

  it('a confirmation signed by another key is 401 and visits nothing', async () => {
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'aws_sns', secret: TOPIC } });
    const subscribeUrl = `https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=forged`;
    const body = signSns(snsSubscriptionConfirmation({ SigningCertURL: CERT_URL, SubscribeURL: subscribeUrl }), selfSignedCertificate({ commonName: 'x' }).privateKey);
    expect((await deliver(trigger.url, body, SNS_TEXT)).status).toBe(401);
    expect(fetcher!.asked).not.toContain(subscribeUrl);
  });
});

describe('certificate fetches chosen by unauthenticated requests', () => {
  it('forged PayPal deliveries naming a certificate URL that fails cost one fetch, not one or two each', async () => {
    const token = await stack.token('sns-owner');
    const trigger = await createTrigger(stack, token, { flow: 'echo', signature: { service: 'paypal', secret: '1JE4291016473214C' } });
    const path = '/v1/notifications/certs/CERT-forged-e2e';
    const body = '{"id":"WH-forged","event_type":"PAYMENT.SALE.COMPLETED"}';
    for (let i = 0; i < 3; i++) {
      const headers = signPayPal({ body, webhookId: '1JE4291016473214C', transmissionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), certUrl: `https://api.paypal.com${path}` }, signer.privateKey);
      expect((await deliver(trigger.url, body, { ...headers, 'content-type': 'application/json' })).status).toBe(401);
    }
    // Not served: the local server answers 404, and that failure is remembered.
    expect(server.hits.get(`/api.paypal.com${path}`)).toBe(1);
  });
});
