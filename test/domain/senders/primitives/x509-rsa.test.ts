import { X509Certificate } from 'node:crypto';
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

  describe('with a leaf-only certificate, its issuer fetched from its AIA "CA Issuers" URI', () => {
    const SNS_AIA: X509RsaParams = { ...SNS, issuerHosts: ['crt.*.amazontrust.com', 'cacerts.digicert.com'] };
    const ISSUER_URL = 'http://crt.r2m01.amazontrust.com/r2m01.cer';
    const valid = { notBefore: new Date((NOW - DAY) * 1000), notAfter: new Date((NOW + 365 * DAY) * 1000) };
    const intermediateUnder = (issuer: typeof root, issuerName: string, caIssuers?: string, commonName = 'Test Intermediate M01') =>
      selfSignedCertificate({ commonName, ca: true, ...valid, issuer: { certificate: issuer, commonName: issuerName }, ...(caIssuers && { caIssuers }) });
    const leafUnder = (intermediate: typeof root, caIssuers: string, intermediateName = 'Test Intermediate M01') =>
      selfSignedCertificate({ commonName: 'sns.amazonaws.com', keyPair: signer, ...valid, issuer: { certificate: intermediate, commonName: intermediateName }, caIssuers });
    /** As Amazon and DigiCert publish issuers: DER. */
    const der = (certificate: typeof root) => new X509Certificate(certificate.pem).raw;
    const verifyWith = (leaf: typeof root, issuers: Record<string, Uint8Array | string>, params = SNS_AIA) => {
      const fetcher = memoryFetcher({ [CERT_URL]: leaf.pem }, [root.pem], issuers);
      const body = signSns(snsNotification(), leaf.privateKey);
      return { fetcher, verdict: verifyX509Rsa(params, contextFor({ body, secrets: [TOPIC], keys: fetcher })) };
    };

    it('returns true when the URI is on an allowed host and serves the intermediate that chains to the root (DER or PEM)', async () => {
      const intermediate = intermediateUnder(root, ROOT_NAME);
      for (const served of [der(intermediate), intermediate.pem]) {
        const { fetcher, verdict } = verifyWith(leafUnder(intermediate, ISSUER_URL), { [ISSUER_URL]: served });
        expect(await verdict).toBe(true);
        expect(fetcher.fetched).toEqual([CERT_URL, ISSUER_URL]);
      }
    });

    it('returns true two hops from the root, and false three hops away', async () => {
      const upper = intermediateUnder(root, ROOT_NAME, undefined, 'Test Upper');
      const lower = intermediateUnder(upper, 'Test Upper', 'http://cacerts.digicert.com/upper.crt');
      const twoHops = verifyWith(leafUnder(lower, ISSUER_URL), { [ISSUER_URL]: der(lower), 'http://cacerts.digicert.com/upper.crt': der(upper) });
      expect(await twoHops.verdict).toBe(true);
      const top = intermediateUnder(root, ROOT_NAME, undefined, 'Test Top');
      const upper3 = intermediateUnder(top, 'Test Top', 'http://cacerts.digicert.com/top.crt', 'Test Upper');
      const lower3 = intermediateUnder(upper3, 'Test Upper', 'http://cacerts.digicert.com/upper3.crt');
      const threeHops = verifyWith(leafUnder(lower3, ISSUER_URL), {
        [ISSUER_URL]: der(lower3), 'http://cacerts.digicert.com/upper3.crt': der(upper3), 'http://cacerts.digicert.com/top.crt': der(top),
      });
      expect(await threeHops.verdict).toBe(false);
      expect(threeHops.fetcher.fetched).not.toContain('http://cacerts.digicert.com/top.crt');
    });

    it('refuses a URI off the allowed hosts (or with a port, credentials, a query, another scheme) without fetching it', async () => {
      const intermediate = intermediateUnder(root, ROOT_NAME);
      for (const url of [
        'http://crt.r2m01.amazontrust.com.evil.example/r2m01.cer',
        'http://evil.example/r2m01.cer',
        'http://crt.a.b.amazontrust.com/r2m01.cer',
        'http://crt.r2m01.amazontrust.com:8080/r2m01.cer',
        'http://user@crt.r2m01.amazontrust.com/r2m01.cer',
        'http://crt.r2m01.amazontrust.com/r2m01.cer?x=1',
        'ftp://crt.r2m01.amazontrust.com/r2m01.cer',
      ]) {
        const { fetcher, verdict } = verifyWith(leafUnder(intermediate, url), { [url]: der(intermediate) });
        expect(await verdict, url).toBe(false);
        expect(fetcher.fetched, url).toEqual([CERT_URL]);
      }
    });

    it('fetches no issuer for a row without issuerHosts', async () => {
      const intermediate = intermediateUnder(root, ROOT_NAME);
      const { fetcher, verdict } = verifyWith(leafUnder(intermediate, ISSUER_URL), { [ISSUER_URL]: der(intermediate) }, SNS);
      expect(await verdict).toBe(false);
      expect(fetcher.fetched).toEqual([CERT_URL]);
    });

    it('returns false when the fetched certificate does not chain to the root, did not issue the leaf, is no CA, or is not a certificate', async () => {
      const strangerRoot = selfSignedCertificate({ commonName: ROOT_NAME, ...valid }); // same name, another key
      const underStranger = intermediateUnder(strangerRoot, ROOT_NAME);
      expect(await verifyWith(leafUnder(underStranger, ISSUER_URL), { [ISSUER_URL]: der(underStranger) }).verdict).toBe(false);
      const issuer = intermediateUnder(root, ROOT_NAME);
      const namesake = intermediateUnder(root, ROOT_NAME); // same name, another key: not the leaf's issuer
      expect(await verifyWith(leafUnder(issuer, ISSUER_URL), { [ISSUER_URL]: der(namesake) }).verdict).toBe(false);
      const notCa = selfSignedCertificate({ commonName: 'Test Intermediate M01', ca: false, ...valid, issuer: { certificate: root, commonName: ROOT_NAME } });
      expect(await verifyWith(leafUnder(notCa, ISSUER_URL), { [ISSUER_URL]: der(notCa) }).verdict).toBe(false);
      expect(await verifyWith(leafUnder(issuer, ISSUER_URL), { [ISSUER_URL]: 'not a certificate' }).verdict).toBe(false);
    });

    it('returns false for a self-signed leaf, whatever its AIA points to', async () => {
      const intermediate = intermediateUnder(root, ROOT_NAME);
      const selfSigned = selfSignedCertificate({ commonName: 'sns.amazonaws.com', ...valid, caIssuers: ISSUER_URL });
      expect(await verifyWith(selfSigned, { [ISSUER_URL]: der(intermediate) }).verdict).toBe(false);
    });

    it('does not keep a failed issuer fetch as the verdict: the certificate passes once its issuer can be fetched', async () => {
      const intermediate = intermediateUnder(root, ROOT_NAME);
      const leaf = leafUnder(intermediate, ISSUER_URL);
      const issuers: Record<string, Uint8Array> = {};
      const fetcher = memoryFetcher({ [CERT_URL]: leaf.pem }, [root.pem], issuers);
      const ctx = () => contextFor({ body: signSns(snsNotification(), leaf.privateKey), secrets: [TOPIC], keys: fetcher });
      expect(await verifyX509Rsa(SNS_AIA, ctx())).toBe(false);
      issuers[ISSUER_URL] = der(intermediate);
      expect(await verifyX509Rsa(SNS_AIA, ctx())).toBe(true);
    });
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
