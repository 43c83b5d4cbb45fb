/**
 * Amazon SNS HTTP(S) messages, proven against AWS's own validator, `sns-validator`
 * (github.com/aws/aws-js-sns-message-validator), and AWS's documented algorithm:
 * https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
 * Messages are signed with a test certificate; both validators fetch it from a local HTTPS server
 * standing in for `sns.<region>.amazonaws.com` (AWS's validator through its `https.get`, ours through
 * the real HttpsKeyFetcher), so nothing here reaches the internet.
 */
import { createRequire } from 'node:module';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HttpsKeyFetcher } from '../../../functions/adapters/https-key-fetcher.js';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { signSns, snsNotification, snsSubscriptionConfirmation, snsStringToSign, type SnsMessage } from '../../support/asymmetric-signers.js';
import { certificateChain, selfSignedCertificate } from '../../support/certificates.js';
import { localFetcher, startKeyServer, type KeyServer } from '../../support/key-server.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** AWS's validator ships no types: the one call used here. */
const MessageValidator = createRequire(import.meta.url)('sns-validator') as new () => {
  validate(message: string, callback: (error: Error | null) => void): void;
};

/** The catalog's `aws_sns` row: certificates from AWS's hosts only (China's too), a `.pem` path. */
const AWS_SNS = rowOf('aws_sns');
const TOPIC = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
const OTHER_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:MyOldTopic';

/** A test root in place of the public root AWS's certificates chain to; ours is told to trust it, AWS's checks no chain. */
const { root, leaf: signer } = certificateChain({ commonName: 'sns.amazonaws.com' });
const impostor = selfSignedCertificate({ commonName: 'sns.amazonaws.com', issuer: { certificate: root, commonName: 'Flowgate Test Root CA' } });
const trustingTestRoot = () => new HttpsKeyFetcher({ ca: server.ca, trustedRoots: [root.pem] });
let certificateNumber = 0;
/** A fresh certificate URL per test: AWS's validator caches certificates by URL for the life of the process. */
const certificateUrl = () => `https://sns.us-west-2.amazonaws.com/SimpleNotificationService-test${++certificateNumber}.pem`;

let server: KeyServer;
beforeAll(async () => {
  server = await startKeyServer();
  const realGet = https.get;
  // AWS's validator calls https.get(certUrl, callback): send it to the local server, trusting its certificate.
  vi.spyOn(https, 'get').mockImplementation(((url: string, callback: (res: unknown) => void) => {
    const { host, pathname } = new URL(url);
    return realGet(`${server.origin}/${host}${pathname}`, { ca: server.ca }, callback as never);
  }) as never);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await server.close();
});

/** Serves `pem` at the local stand-in for `url`. */
function publish(url: string, pem: string): void {
  const { host, pathname } = new URL(url);
  server.routes.set(`/${host}${pathname}`, { body: pem, headers: { 'content-type': 'application/x-pem-file' } });
}

function awsVerdict(body: string): Promise<boolean> {
  return new Promise((resolve) => new MessageValidator().validate(body, (error) => resolve(!error)));
}

async function verdicts(body: string, keys = localFetcher(server, trustingTestRoot())) {
  const ours = await verifySender(AWS_SNS, contextFor({ body, secrets: [TOPIC], keys, nowSeconds: Math.floor(Date.now() / 1000) }));
  return { ours, aws: await awsVerdict(body) };
}

function signed(message: SnsMessage, version: '1' | '2' = '2') {
  const url = certificateUrl();
  publish(url, signer.pem);
  return signSns({ ...message, SigningCertURL: url }, signer.privateKey, version);
}

describe("aws_sns: RSA over SNS's canonical string, as AWS's sns-validator verifies it", () => {
  it('a Notification signed with SignatureVersion 2 (SHA256withRSA) passes both', async () => {
    expect(await verdicts(signed(snsNotification()))).toEqual({ ours: true, aws: true });
  });

  it('a Notification signed with SignatureVersion 1 (SHA1withRSA) passes AWS\'s, not ours: version 2 only', async () => {
    expect(await verdicts(signed(snsNotification(), '1'))).toEqual({ ours: false, aws: true });
  });

  it('a certificate at sns.s3.amazonaws.com (an S3 bucket named sns, anyone\'s) fails both, and neither fetches it', async () => {
    const url = 'https://sns.s3.amazonaws.com/SimpleNotificationService-bucket.pem';
    publish(url, impostor.pem);
    expect(await verdicts(signSns(snsNotification({ SigningCertURL: url }), impostor.privateKey))).toEqual({ ours: false, aws: false });
    expect(server.hits.get('/sns.s3.amazonaws.com/SimpleNotificationService-bucket.pem')).toBeUndefined();
  });

  it('a self-signed certificate named sns.amazonaws.com passes AWS\'s sns-validator, not ours: it chains to no trusted root', async () => {
    const selfSigned = selfSignedCertificate({ commonName: 'sns.amazonaws.com' });
    const url = certificateUrl();
    publish(url, selfSigned.pem);
    expect(await verdicts(signSns(snsNotification({ SigningCertURL: url }), selfSigned.privateKey))).toEqual({ ours: false, aws: true });
  });

  it('a SubscriptionConfirmation (Token and SubscribeURL signed) passes both', async () => {
    expect(await verdicts(signed(snsSubscriptionConfirmation()))).toEqual({ ours: true, aws: true });
  });

  it('a changed Message fails both', async () => {
    const body = JSON.parse(signed(snsNotification()));
    expect(await verdicts(JSON.stringify({ ...body, Message: 'Hello world?' }))).toEqual({ ours: false, aws: false });
  });

  it("a signature by another key than the certificate's fails both", async () => {
    const url = certificateUrl();
    publish(url, signer.pem);
    expect(await verdicts(signSns(snsNotification({ SigningCertURL: url }), impostor.privateKey))).toEqual({ ours: false, aws: false });
  });

  it('a message without its Signature fails both', async () => {
    const { Signature: _, ...unsigned } = JSON.parse(signed(snsNotification()));
    expect(await verdicts(JSON.stringify(unsigned))).toEqual({ ours: false, aws: false });
  });

  it('a certificate URL on another host fails both, and neither fetches it', async () => {
    const url = 'https://sns.us-west-2.amazonaws.com.evil.example/SimpleNotificationService-evil.pem';
    publish(url, impostor.pem);
    const body = signSns(snsNotification({ SigningCertURL: url }), impostor.privateKey);
    expect(await verdicts(body)).toEqual({ ours: false, aws: false });
    expect(server.hits.get('/sns.us-west-2.amazonaws.com.evil.example/SimpleNotificationService-evil.pem')).toBeUndefined();
  });

  it('another topic than the pasted ARN fails ours (AWS leaves the topic check to the caller, and the docs ask for it)', async () => {
    const body = signed(snsNotification({ TopicArn: 'arn:aws:sns:us-west-2:999999999999:SomeoneElses' }));
    expect(await verdicts(body)).toEqual({ ours: false, aws: true });
  });

  it('topic rotation (moving the trigger to a new topic): a message from either pasted ARN passes ours, as AWS\'s does', async () => {
    const body = signed(snsNotification({ TopicArn: OTHER_TOPIC }));
    const keys = localFetcher(server, trustingTestRoot());
    const nowSeconds = Math.floor(Date.now() / 1000);
    expect(await verifySender(AWS_SNS, contextFor({ body, secrets: [TOPIC, OTHER_TOPIC], keys, nowSeconds }))).toBe(true);
    expect(await awsVerdict(body)).toBe(true);
  });

  it('checkSenderSecret accepts both topic ARNs', () => {
    expect(checkSenderSecret(AWS_SNS, TOPIC)).toBeUndefined();
    expect(checkSenderSecret(AWS_SNS, OTHER_TOPIC)).toBeUndefined();
  });

  it('an old Timestamp passes both: AWS documents no freshness window, and a retry resends the message as first signed', async () => {
    expect(await verdicts(signed(snsNotification({ Timestamp: '2012-04-25T21:49:25.719Z' })))).toEqual({ ours: true, aws: true });
  });

  it('a second message naming the same certificate is verified from the cache, without a fetch', async () => {
    const url = certificateUrl();
    publish(url, signer.pem);
    const keys = localFetcher(server, trustingTestRoot());
    const ctx = (body: string) => contextFor({ body, secrets: [TOPIC], keys, nowSeconds: Math.floor(Date.now() / 1000) });
    expect(await verifySender(AWS_SNS, ctx(signSns(snsNotification({ SigningCertURL: url }), signer.privateKey)))).toBe(true);
    expect(await verifySender(AWS_SNS, ctx(signSns(snsNotification({ SigningCertURL: url, MessageId: 'second' }), signer.privateKey)))).toBe(true);
    const { host, pathname } = new URL(url);
    expect(server.hits.get(`/${host}${pathname}`)).toBe(1);
  });

  it("the string to sign matches AWS's documented layout", () => {
    expect(snsStringToSign(snsNotification({ Message: 'm', MessageId: 'i', Subject: 's', Timestamp: 't', TopicArn: 'a' }))).toBe(
      'Message\nm\nMessageId\ni\nSubject\ns\nTimestamp\nt\nTopicArn\na\nType\nNotification\n',
    );
  });
});
