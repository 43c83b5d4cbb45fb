import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  certificateUrlAllowed,
  checkX509RsaSecret,
  verifyX509Rsa,
  type X509RsaParams,
} from '../../../../functions/domain/webhooks/senders/primitives/x509-rsa.js';
import { PAYPAL_CERT_URL, signPayPal, signSns, snsNotification, snsSubscriptionConfirmation } from '../../../support/asymmetric-signers.js';
import { selfSignedCertificate } from '../../../support/certificates.js';
import { arbitraryContext, contextFor, memoryFetcher, NOW } from '../../../support/verify-context.js';

const SNS: X509RsaParams = {
  message: 'aws_sns',
  certificateUrl: { hosts: ['sns.{region}.amazonaws.com', 'sns.{region}.amazonaws.com.cn'], pathSuffix: '.pem' },
  signerCommonNames: ['sns.amazonaws.com', 'sns.amazonaws.com.cn'],
};
const PAYPAL: X509RsaParams = {
  message: 'paypal',
  certificateUrl: { hosts: ['api.paypal.com', 'api-m.paypal.com', 'api.sandbox.paypal.com', 'api-m.sandbox.paypal.com'], pathPrefix: '/v1/notifications/certs/' },
  toleranceSeconds: 300,
};
const TOPIC = 'arn:aws:sns:us-west-2:123456789012:MyTopic';
const WEBHOOK_ID = '1JE4291016473214C';
const DAY = 24 * 3600;

/** A test root standing in for the public roots SNS's certificates chain to. */
const ROOT_NAME = 'Flowgate Test Root CA';
const root = selfSignedCertificate({ commonName: ROOT_NAME, notBefore: new Date((NOW - 10 * DAY) * 1000), notAfter: new Date((NOW + 3650 * DAY) * 1000) });
/** Certificates valid around the pinned clock, issued under the test root. */
const certificate = (from = NOW - DAY, to = NOW + 365 * DAY, commonName = 'sns.amazonaws.com') =>
  selfSignedCertificate({ commonName, notBefore: new Date(from * 1000), notAfter: new Date(to * 1000), issuer: { certificate: root, commonName: ROOT_NAME } });
const signer = certificate();
const impostor = certificate();
const CERT_URL = snsNotification().SigningCertURL!;

describe('verifyX509Rsa(params, ctx) for SNS messages', () => {
  const keys = (pem = signer.pem) => memoryFetcher({ [CERT_URL]: pem }, [root.pem]);

  it('returns true for a notification signed with SignatureVersion 2 (SHA256withRSA), and false for 1 (SHA1withRSA)', async () => {
    expect(await verifyX509Rsa(SNS, contextFor({ body: signSns(snsNotification(), signer.privateKey, '2'), secrets: [TOPIC], keys: keys() }))).toBe(true);
    expect(await verifyX509Rsa(SNS, contextFor({ body: signSns(snsNotification(), signer.privateKey, '1'), secrets: [TOPIC], keys: keys() }))).toBe(false);
  });

  it('returns false for a certificate not named sns.amazonaws.com, though it chains to the root', async () => {
    const other = certificate(NOW - DAY, NOW + 365 * DAY, 'sns.evil.example');
    expect(await verifyX509Rsa(SNS, contextFor({ body: signSns(snsNotification(), other.privateKey), secrets: [TOPIC], keys: keys(other.pem) }))).toBe(false);
    const china = certificate(NOW - DAY, NOW + 365 * DAY, 'sns.amazonaws.com.cn');
    expect(await verifyX509Rsa(SNS, contextFor({ body: signSns(snsNotification(), china.privateKey), secrets: [TOPIC], keys: keys(china.pem) }))).toBe(true);
  });

  it('returns false for a certificate named sns.amazonaws.com that does not chain to a trusted root: self-signed, or under a root Node does not bundle', async () => {
    const selfSigned = selfSignedCertificate({ commonName: 'sns.amazonaws.com', keyPair: signer, notBefore: new Date((NOW - DAY) * 1000), notAfter: new Date((NOW + DAY) * 1000) });
    const body = signSns(snsNotification(), signer.privateKey);
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: keys(selfSigned.pem) }))).toBe(false);
    // No roots given: Node's bundled roots, under which the test root is nobody.
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: memoryFetcher({ [CERT_URL]: signer.pem }) }))).toBe(false);
  });

  it('returns true for a certificate served with its intermediate, when the intermediate chains to the root', async () => {
    const intermediate = selfSignedCertificate({ commonName: 'Test Intermediate', ca: true, notBefore: new Date((NOW - DAY) * 1000), notAfter: new Date((NOW + 365 * DAY) * 1000), issuer: { certificate: root, commonName: ROOT_NAME } });
    const leaf = selfSignedCertificate({ commonName: 'sns.amazonaws.com', notBefore: new Date((NOW - DAY) * 1000), notAfter: new Date((NOW + 365 * DAY) * 1000), issuer: { certificate: intermediate, commonName: 'Test Intermediate' } });
    const body = signSns(snsNotification(), leaf.privateKey);
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: keys(leaf.pem + intermediate.pem) }))).toBe(true);
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: keys(leaf.pem) }))).toBe(false);
  });

  it('returns false for a Subject that is not a string: it would be left out of the signed string and still reach the flow', async () => {
    const { Subject: _, ...noSubject } = snsNotification();
    const signed = JSON.parse(signSns(noSubject, signer.privateKey)) as Record<string, unknown>;
    for (const Subject of [{ injected: true }, 42, null, ['a']]) {
      expect(await verifyX509Rsa(SNS, contextFor({ body: JSON.stringify({ ...signed, Subject }), secrets: [TOPIC], keys: keys() })), JSON.stringify(Subject)).toBe(false);
    }
  });

  it('returns true for a notification without a Subject and for a SubscriptionConfirmation', async () => {
    const { Subject: _, ...noSubject } = snsNotification();
    for (const message of [noSubject, snsSubscriptionConfirmation()]) {
      expect(await verifyX509Rsa(SNS, contextFor({ body: signSns(message, signer.privateKey), secrets: [TOPIC], keys: keys() }))).toBe(true);
    }
  });

  it('returns false for a changed signed field, and true for a changed unsigned one', async () => {
    const body = JSON.parse(signSns(snsNotification(), signer.privateKey));
    const changed = JSON.stringify({ ...body, Message: 'Hello world?' });
    expect(await verifyX509Rsa(SNS, contextFor({ body: changed, secrets: [TOPIC], keys: keys() }))).toBe(false);
    const unsigned = JSON.stringify({ ...body, UnsubscribeURL: 'https://sns.us-west-2.amazonaws.com/?other' });
    expect(await verifyX509Rsa(SNS, contextFor({ body: unsigned, secrets: [TOPIC], keys: keys() }))).toBe(true);
  });

  it('returns false for a signature by another key than the certificate\'s', async () => {
    const body = signSns(snsNotification(), impostor.privateKey);
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: keys() }))).toBe(false);
  });

  it('returns false for another topic than the one pasted, without fetching', async () => {
    const fetcher = keys();
    const body = signSns(snsNotification(), signer.privateKey);
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: ['arn:aws:sns:us-west-2:123456789012:OtherTopic'], keys: fetcher }))).toBe(false);
    expect(fetcher.fetched).toEqual([]);
  });

  it('accepts any of several topics (rotation, or a move to a new topic)', async () => {
    const body = signSns(snsNotification(), signer.privateKey);
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: ['arn:aws:sns:us-west-2:123456789012:Old', TOPIC], keys: keys() }))).toBe(true);
  });

  it('refuses a certificate URL outside the rule without fetching it', async () => {
    for (const url of [
      'https://sns.us-west-2.amazonaws.com.evil.example/cert.pem',
      'https://evil.example/sns.us-west-2.amazonaws.com/cert.pem',
      'http://sns.us-west-2.amazonaws.com/cert.pem',
      'https://sns.us-west-2.amazonaws.com:8443/cert.pem',
      'https://user@sns.us-west-2.amazonaws.com/cert.pem',
      'https://sns.us-west-2.amazonaws.com/cert.txt',
      'https://sns.us-west-2.amazonaws.com/cert.pem?x=1',
      'https://s3.amazonaws.com/sns/cert.pem',
      'https://sns.a.b.amazonaws.com/cert.pem',
      // Virtual-hosted S3 buckets named `sns`: anyone's.
      'https://sns.s3.amazonaws.com/cert.pem',
      'https://sns.s3-website.amazonaws.com/cert.pem',
      'https://sns.s3.amazonaws.com.cn/cert.pem',
      'https://sns.execute-api.amazonaws.com/cert.pem',
      'not a url',
    ]) {
      const fetcher = memoryFetcher({ [url]: impostor.pem });
      const body = signSns(snsNotification({ SigningCertURL: url }), impostor.privateKey);
      expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: fetcher })), url).toBe(false);
      expect(fetcher.fetched, url).toEqual([]);
    }
  });

  it('allows the China regions\' host, and every region-shaped host', () => {
    expect(certificateUrlAllowed('https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-x.pem', SNS.certificateUrl)).toBe(true);
    for (const region of ['us-east-1', 'us-gov-west-1', 'eu-central-2', 'ap-southeast-4', 'il-central-1']) {
      expect(certificateUrlAllowed(`https://sns.${region}.amazonaws.com/SimpleNotificationService-x.pem`, SNS.certificateUrl), region).toBe(true);
    }
  });

  it('returns false when a field AWS signs is missing, or the version is unknown', async () => {
    const message = snsNotification();
    const { MessageId: _, ...noId } = message;
    for (const body of [signSns(noId, signer.privateKey), signSns(message, signer.privateKey).replace('"SignatureVersion": "2"', '"SignatureVersion": "3"')]) {
      expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: keys() }))).toBe(false);
    }
  });

  it('returns false for a body that is not an SNS message: not JSON, an array, numbers for strings', async () => {
    for (const body of ['', 'not json', '[]', 'null', JSON.stringify({ ...snsNotification(), Type: 42 }), JSON.stringify({ ...JSON.parse(signSns(snsNotification(), signer.privateKey)), Signature: '!!!' })]) {
      expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: keys() }))).toBe(false);
    }
  });

  it('returns false when the certificate cannot be fetched, is not a certificate, or is expired', async () => {
    const body = signSns(snsNotification(), signer.privateKey);
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: memoryFetcher({}) }))).toBe(false);
    for (const text of ['', 'garbage', signer.pem.replace(/[A-Z]/g, 'A'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----']) {
      expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: memoryFetcher({ [CERT_URL]: text }) }))).toBe(false);
    }
    const expired = selfSignedCertificate({ commonName: 'sns.amazonaws.com', keyPair: signer, notBefore: new Date((NOW - 400 * DAY) * 1000), notAfter: new Date((NOW - DAY) * 1000), issuer: { certificate: root, commonName: ROOT_NAME } });
    expect(await verifyX509Rsa(SNS, contextFor({ body, secrets: [TOPIC], keys: keys(expired.pem) }))).toBe(false);
  });

  it('never throws on arbitrary bodies, headers and secrets', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryContext(['x-amz-sns-message-type'], keys()), async (ctx) => {
        expect(typeof (await verifyX509Rsa(SNS, ctx))).toBe('boolean');
      }),
      { numRuns: 200 },
    );
  });

  it('never throws on SNS-shaped messages with arbitrary field values', async () => {
    const field = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(CERT_URL), fc.constantFrom('1', '2', 'Notification', 'SubscriptionConfirmation'));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom('Type', 'Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'SignatureVersion', 'Signature', 'SigningCertURL', 'Token', 'SubscribeURL'), field), async (message) => {
        const ctx = contextFor({ body: JSON.stringify(message), secrets: [TOPIC], keys: keys() });
        expect(typeof (await verifyX509Rsa(SNS, ctx))).toBe('boolean');
      }),
      { numRuns: 200 },
    );
  });
});

describe('verifyX509Rsa(params, ctx) for PayPal deliveries', () => {
  const body = '{"id":"WH-2WR32451HC0233532-67976317FL4543714","event_type":"PAYMENT.CAPTURE.COMPLETED"}';
  const time = new Date(NOW * 1000).toISOString().replace('.000', '');
  const keys = () => memoryFetcher({ [PAYPAL_CERT_URL]: signer.pem });
  const headers = (overrides: Partial<Parameters<typeof signPayPal>[0]> = {}, key = signer.privateKey) =>
    signPayPal({ body, webhookId: WEBHOOK_ID, transmissionTime: time, ...overrides }, key);

  it('returns true for a delivery signed for the pasted webhook ID', async () => {
    expect(await verifyX509Rsa(PAYPAL, contextFor({ body, headers: headers(), secrets: [WEBHOOK_ID], keys: keys() }))).toBe(true);
  });

  it('returns false for a changed body, another webhook ID, or another key', async () => {
    expect(await verifyX509Rsa(PAYPAL, contextFor({ body: `${body} `, headers: headers(), secrets: [WEBHOOK_ID], keys: keys() }))).toBe(false);
    expect(await verifyX509Rsa(PAYPAL, contextFor({ body, headers: headers(), secrets: ['5GP028458E2496506'], keys: keys() }))).toBe(false);
    expect(await verifyX509Rsa(PAYPAL, contextFor({ body, headers: headers({}, impostor.privateKey), secrets: [WEBHOOK_ID], keys: keys() }))).toBe(false);
  });

  it('accepts either of two webhook IDs (rotation)', async () => {
    expect(await verifyX509Rsa(PAYPAL, contextFor({ body, headers: headers(), secrets: ['5GP028458E2496506', WEBHOOK_ID], keys: keys() }))).toBe(true);
  });

  it('returns false when any of the five headers is missing, or the algorithm is another', async () => {
    for (const name of Object.keys(headers())) {
      const partial: Record<string, string> = { ...headers() };
      delete partial[name];
      expect(await verifyX509Rsa(PAYPAL, contextFor({ body, headers: partial, secrets: [WEBHOOK_ID], keys: keys() })), name).toBe(false);
    }
    const sha1 = { ...headers(), 'PAYPAL-AUTH-ALGO': 'SHA1withRSA' };
    expect(await verifyX509Rsa(PAYPAL, contextFor({ body, headers: sha1, secrets: [WEBHOOK_ID], keys: keys() }))).toBe(false);
  });

  it('returns false for a transmission time outside the tolerance, or not RFC 3339', async () => {
    for (const transmissionTime of [new Date((NOW - 301) * 1000).toISOString(), 'yesterday', String(NOW)]) {
      expect(await verifyX509Rsa(PAYPAL, contextFor({ body, headers: headers({ transmissionTime }), secrets: [WEBHOOK_ID], keys: keys() }))).toBe(false);
    }
  });

  it('refuses a certificate URL off PayPal\'s hosts without fetching it', async () => {
    for (const certUrl of ['https://api.paypal.com.evil.example/v1/notifications/certs/CERT-1', 'https://evil.example/v1/notifications/certs/CERT-1', 'https://api.paypal.com/v1/other/CERT-1', 'http://api.paypal.com/v1/notifications/certs/CERT-1']) {
      const fetcher = memoryFetcher({ [certUrl]: impostor.pem });
      expect(await verifyX509Rsa(PAYPAL, contextFor({ body, headers: headers({ certUrl }, impostor.privateKey), secrets: [WEBHOOK_ID], keys: fetcher }))).toBe(false);
      expect(fetcher.fetched).toEqual([]);
    }
  });

  it('never throws on arbitrary headers and bodies', async () => {
    const names = Object.keys(headers()).map((name) => name.toLowerCase());
    await fc.assert(
      fc.asyncProperty(arbitraryContext(names, keys()), async (ctx) => {
        expect(typeof (await verifyX509Rsa(PAYPAL, ctx))).toBe('boolean');
      }),
      { numRuns: 200 },
    );
  });
});

describe('checkX509RsaSecret(secret, params)', () => {
  it('wants a topic ARN for SNS', () => {
    expect(checkX509RsaSecret(TOPIC, SNS)).toBeUndefined();
    expect(checkX509RsaSecret('arn:aws-cn:sns:cn-north-1:123456789012:orders.fifo', SNS)).toBeUndefined();
    expect(checkX509RsaSecret('MyTopic', SNS)).toMatch(/topic ARN/);
  });

  it('wants a webhook ID for PayPal', () => {
    expect(checkX509RsaSecret(WEBHOOK_ID, PAYPAL)).toBeUndefined();
    expect(checkX509RsaSecret('WH-1', PAYPAL)).toMatch(/webhook ID/);
  });
});
