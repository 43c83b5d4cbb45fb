import { senderSdks } from '../support/sender-sdks.js';
import { describe, expect, it } from 'vitest';
import { rowOfSignature } from '../../functions/domain/webhooks/senders/catalog.js';
import type { KeyFetcher } from '../../functions/domain/webhooks/senders/context.js';
import { verifySender } from '../../functions/domain/webhooks/senders/verify.js';
import type { CustomSignatureConfig } from '../../functions/domain/webhooks/signatures/custom.js';
import type { SignedRequest } from '../../functions/domain/webhooks/signatures/request.js';
import {
  signCustom,
  signGithub,
  signShopify,
  signSlack,
  signStandardWebhooks,
  signStripe,
  signTwilio,
} from '../support/signers.js';

const NOW = 1_700_000_000;
const BODY = '{"id":"evt_1","type":"customer.created","data":{"object":{"id":"cus_1"}}}';
const URL_BASE = 'https://hooks.example.com/webhooks/wh_1';
const FORM_BODY = 'AccountSid=AC123&Body=Hello+there&From=%2B15551234567&MessageSid=SM1';
const FORM = 'application/x-www-form-urlencoded';

/** The six senders whose schemes were built in before the sender catalog, and `custom`: here, their catalog rows. */
type SignatureService = 'stripe' | 'github' | 'slack' | 'shopify' | 'twilio' | 'standard_webhooks' | 'custom';

/** A trigger's signature as the receiver reads it: the sender, the secrets in force, and `custom`'s HMAC settings. */
interface SignatureConfig {
  service: SignatureService;
  secrets: string[];
  custom?: CustomSignatureConfig;
}

/** HMAC senders publish no keys: a verification that reaches for one fails loudly. */
const NO_KEYS: KeyFetcher = { fetchText: (url) => Promise.reject(new Error(`no key fetch expected (${url})`)) };

/** A delivery verified as the receiver verifies it: the trigger's catalog row (`rowOfSignature`), then `verifySender`. */
function verifyDelivery(config: SignatureConfig, request: SignedRequest): Promise<boolean> {
  const row = rowOfSignature(config);
  if (!row) throw new Error(`no catalog row for ${config.service}`);
  return verifySender(row, { request, secrets: config.secrets, keys: NO_KEYS, method: 'POST' });
}

interface Signed {
  headers: Record<string, string>;
  url?: string;
}

/** One sender scheme: its config, a real signer, and the header that carries the signature. */
interface Scheme {
  service: SignatureService;
  secret: string;
  otherSecret: string;
  custom?: CustomSignatureConfig;
  signatureHeader: string;
  timestamped: boolean;
  contentType?: string;
  body: string;
  sign(secret: string, body: string, timestamp: number): Signed | Promise<Signed>;
}

const HEX_CUSTOM: CustomSignatureConfig = { algorithm: 'sha256', header: 'X-Signature', encoding: 'hex', prefix: 'sha256=' };
const TIMED_CUSTOM: CustomSignatureConfig = {
  algorithm: 'sha512',
  header: 'X-Acme-Signature',
  encoding: 'base64',
  timestamp_header: 'X-Acme-Timestamp',
};

const SCHEMES: Scheme[] = [
  {
    service: 'stripe',
    secret: 'whsec_stripe_one',
    otherSecret: 'whsec_stripe_two',
    signatureHeader: 'stripe-signature',
    timestamped: true,
    body: BODY,
    sign: (secret, body, timestamp) => ({ headers: signStripe({ secret, body, timestamp }) }),
  },
  {
    service: 'github',
    secret: 'github-secret-one',
    otherSecret: 'github-secret-two',
    signatureHeader: 'x-hub-signature-256',
    timestamped: false,
    body: BODY,
    sign: async (secret, body) => ({ headers: await signGithub({ secret, body }) }),
  },
  {
    service: 'slack',
    secret: 'slack-signing-secret-one',
    otherSecret: 'slack-signing-secret-two',
    signatureHeader: 'x-slack-signature',
    timestamped: true,
    body: BODY,
    sign: (secret, body, timestamp) => ({ headers: signSlack({ secret, body, timestamp }) }),
  },
  {
    service: 'shopify',
    secret: 'shpss_one',
    otherSecret: 'shpss_two',
    signatureHeader: 'x-shopify-hmac-sha256',
    timestamped: false,
    body: BODY,
    sign: (secret, body) => ({ headers: signShopify({ secret, body }) }),
  },
  {
    service: 'twilio',
    secret: 'twilio-auth-token-one',
    otherSecret: 'twilio-auth-token-two',
    signatureHeader: 'x-twilio-signature',
    timestamped: false,
    contentType: FORM,
    body: FORM_BODY,
    sign: (authToken, body) => signTwilio({ authToken, url: `${URL_BASE}?tenant=a`, body, contentType: FORM }),
  },
  {
    service: 'standard_webhooks',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=',
    signatureHeader: 'webhook-signature',
    timestamped: true,
    body: BODY,
    sign: (secret, body, timestamp) => ({ headers: signStandardWebhooks({ secret, id: 'msg_1', timestamp, body }) }),
  },
  {
    service: 'custom',
    secret: 'custom-secret-one',
    otherSecret: 'custom-secret-two',
    custom: HEX_CUSTOM,
    signatureHeader: 'x-signature',
    timestamped: false,
    body: BODY,
    sign: (secret, body) => ({ headers: signCustom(HEX_CUSTOM, secret, body) }),
  },
  {
    service: 'custom',
    secret: 'custom-secret-one',
    otherSecret: 'custom-secret-two',
    custom: TIMED_CUSTOM,
    signatureHeader: 'x-acme-signature',
    timestamped: true,
    body: BODY,
    sign: (secret, body, timestamp) => ({ headers: signCustom(TIMED_CUSTOM, secret, body, timestamp) }),
  },
];

function configFor(scheme: Scheme, secrets = [scheme.secret]): SignatureConfig {
  return { service: scheme.service, secrets, ...(scheme.custom ? { custom: scheme.custom } : {}) };
}

function requestOf(signed: Signed, body: string, nowSeconds = NOW): SignedRequest {
  return { rawBody: Buffer.from(body), headers: signed.headers, url: signed.url ?? URL_BASE, nowSeconds };
}

const label = (scheme: Scheme) => (scheme.custom?.timestamp_header ? 'custom with timestamp' : scheme.service);

for (const scheme of SCHEMES) {
  describe(`verifySender(${label(scheme)})`, () => {
    const verify = (signed: Signed, options: { body?: string; secrets?: string[]; now?: number } = {}) =>
      verifyDelivery(configFor(scheme, options.secrets), requestOf(signed, options.body ?? scheme.body, options.now));

    it(`verifySender(${label(scheme)}) returns true for a valid signature`, async () => {
      expect(await verify(await scheme.sign(scheme.secret, scheme.body, NOW))).toBe(true);
    });

    it(`verifySender(${label(scheme)}) returns false for a wrong secret`, async () => {
      expect(await verify(await scheme.sign(scheme.otherSecret, scheme.body, NOW))).toBe(false);
    });

    it(`verifySender(${label(scheme)}) returns false for a changed body`, async () => {
      const signed = await scheme.sign(scheme.secret, scheme.body, NOW);
      expect(await verify(signed, { body: scheme.body.replace('1', '2') })).toBe(false);
    });

    it(`verifySender(${label(scheme)}) returns false for a missing signature header`, async () => {
      const signed = await scheme.sign(scheme.secret, scheme.body, NOW);
      const headers = Object.fromEntries(Object.entries(signed.headers).filter(([name]) => name !== scheme.signatureHeader));
      expect(await verify({ ...signed, headers })).toBe(false);
    });

    it(`verifySender(${label(scheme)}) returns false for a malformed signature header`, async () => {
      const signed = await scheme.sign(scheme.secret, scheme.body, NOW);
      expect(await verify({ ...signed, headers: { ...signed.headers, [scheme.signatureHeader]: 'not a signature!' } })).toBe(false);
    });

    it(`verifySender(${label(scheme)}) returns true when the second secret of a rotation matches`, async () => {
      const signed = await scheme.sign(scheme.otherSecret, scheme.body, NOW);
      expect(await verify(signed, { secrets: [scheme.secret, scheme.otherSecret] })).toBe(true);
    });

    it(`verifySender(${label(scheme)}) accepts surrounding spaces in header values`, async () => {
      const signed = await scheme.sign(scheme.secret, scheme.body, NOW);
      const padded = Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name, ` ${value} `]));
      expect(await verify({ ...signed, headers: padded })).toBe(true);
    });

    if (scheme.timestamped) {
      it(`verifySender(${label(scheme)}) returns false for a timestamp 301 s in the past`, async () => {
        expect(await verify(await scheme.sign(scheme.secret, scheme.body, NOW - 301))).toBe(false);
      });

      it(`verifySender(${label(scheme)}) returns false for a timestamp 301 s in the future`, async () => {
        expect(await verify(await scheme.sign(scheme.secret, scheme.body, NOW + 301))).toBe(false);
      });

      it(`verifySender(${label(scheme)}) returns true for a timestamp exactly 300 s old`, async () => {
        expect(await verify(await scheme.sign(scheme.secret, scheme.body, NOW - 300))).toBe(true);
      });
    }
  });
}

const stripe = SCHEMES[0]!;
const standard = SCHEMES.find((scheme) => scheme.service === 'standard_webhooks')!;
const verifyStripeHeader = (header: string, body = BODY) =>
  verifyDelivery(configFor(stripe), requestOf({ headers: { 'stripe-signature': header } }, body));

describe('verifySender(stripe) header parsing', () => {
  const valid = signStripe({ secret: stripe.secret, body: BODY, timestamp: NOW })['stripe-signature']!;
  const v1 = valid.split(',')[1]!;
  const wrongV1 = `v1=${'0'.repeat(64)}`;

  it('verifySender(stripe) returns true when one of several v1 signatures matches', async () => {
    expect(await verifyStripeHeader(`t=${NOW},${wrongV1},${v1}`)).toBe(true);
  });

  it('verifySender(stripe) ignores v0 signatures', async () => {
    const v0 = v1.replace('v1=', 'v0=');
    expect(await verifyStripeHeader(`t=${NOW},${v0}`)).toBe(false);
  });

  it('verifySender(stripe) returns false for a non-numeric timestamp', async () => {
    expect(await verifyStripeHeader(`t=${NOW}abc,${v1}`)).toBe(false);
  });

  it('verifySender(stripe) returns false for an absurd timestamp', async () => {
    expect(await verifyStripeHeader(`t=${'9'.repeat(400)},${v1}`)).toBe(false);
  });

  it('verifySender(stripe) returns false without a timestamp', async () => {
    expect(await verifyStripeHeader(v1)).toBe(false);
  });

  it('verifySender(stripe) returns false for two timestamps', async () => {
    expect(await verifyStripeHeader(`t=${NOW},t=${NOW},${v1}`)).toBe(false);
  });
});

describe('verifySender(standard_webhooks) header parsing', () => {
  const signed = signStandardWebhooks({ secret: standard.secret, id: 'msg_1', timestamp: NOW, body: BODY });
  const verifyWith = (signature: string) =>
    verifyDelivery(configFor(standard), requestOf({ headers: { ...signed, 'webhook-signature': signature } }, BODY));

  it('verifySender(standard_webhooks) returns true when one of several v1 signatures matches', async () => {
    expect(await verifyWith(`v1,${Buffer.alloc(32).toString('base64')} ${signed['webhook-signature']}`)).toBe(true);
  });

  it('verifySender(standard_webhooks) ignores signatures of other versions', async () => {
    expect(await verifyWith(signed['webhook-signature']!.replace('v1,', 'v1a,'))).toBe(false);
  });

  it('verifySender(standard_webhooks) returns false for a changed webhook-id', async () => {
    expect(
      await verifyDelivery(configFor(standard), requestOf({ headers: { ...signed, 'webhook-id': 'msg_2' } }, BODY)),
    ).toBe(false);
  });

  it('verifySender(standard_webhooks) accepts a secret without the whsec_ prefix', async () => {
    const bare = { ...configFor(standard), secrets: [standard.secret.replace('whsec_', '')] };
    expect(await verifyDelivery(bare, requestOf({ headers: signed }, BODY))).toBe(true);
  });

  it('verifySender(standard_webhooks) returns false for a non-numeric timestamp', async () => {
    expect(
      await verifyDelivery(configFor(standard), requestOf({ headers: { ...signed, 'webhook-timestamp': `${NOW}.5` } }, BODY)),
    ).toBe(false);
  });
});

describe('verifySender(github), verifySender(slack) header parsing', () => {
  it('verifySender(github) returns false for a sha1= signature', async () => {
    const { 'x-hub-signature-256': header } = await signGithub({ secret: 's', body: BODY });
    const request = requestOf({ headers: { 'x-hub-signature-256': header!.replace('sha256=', 'sha1=') } }, BODY);
    expect(await verifyDelivery({ service: 'github', secrets: ['s'] }, request)).toBe(false);
  });

  it('verifySender(slack) returns false without x-slack-request-timestamp', async () => {
    const { 'x-slack-signature': signature } = signSlack({ secret: 's', body: BODY, timestamp: NOW });
    const request = requestOf({ headers: { 'x-slack-signature': signature! } }, BODY);
    expect(await verifyDelivery({ service: 'slack', secrets: ['s'] }, request)).toBe(false);
  });

  it('verifySender(slack) returns false for a negative timestamp', async () => {
    const headers = { ...signSlack({ secret: 's', body: BODY, timestamp: NOW }), 'x-slack-request-timestamp': `-${NOW}` };
    expect(await verifyDelivery({ service: 'slack', secrets: ['s'] }, requestOf({ headers }, BODY))).toBe(false);
  });
});

describe('verifySender(twilio) request shapes', () => {
  const token = 'twilio-auth-token';
  const config: SignatureConfig = { service: 'twilio', secrets: [token] };
  const verifyAt = (url: string, headers: Record<string, string>, body: string) =>
    verifyDelivery(config, requestOf({ url, headers }, body));

  it('verifySender(twilio) returns true for a JSON body bound by bodySHA256', async () => {
    const signed = signTwilio({ authToken: token, url: URL_BASE, body: BODY, contentType: 'application/json' });
    expect(await verifyAt(signed.url, signed.headers, BODY)).toBe(true);
  });

  it('verifySender(twilio) returns false for a JSON body that does not match bodySHA256', async () => {
    const signed = signTwilio({ authToken: token, url: URL_BASE, body: BODY, contentType: 'application/json' });
    expect(await verifyAt(signed.url, signed.headers, `${BODY} `)).toBe(false);
  });

  it('verifySender(twilio) returns false for a JSON body without bodySHA256', async () => {
    const signed = signTwilio({ authToken: token, url: URL_BASE, body: BODY, contentType: 'application/json' });
    expect(await verifyAt(URL_BASE, signed.headers, BODY)).toBe(false);
  });

  it('verifySender(twilio) returns true for repeated form parameters', async () => {
    const body = 'To=%2B1555&MediaUrl=b&MediaUrl=a&MediaUrl=b';
    const signed = signTwilio({ authToken: token, url: URL_BASE, body, contentType: `${FORM}; charset=utf-8` });
    expect(await verifyAt(signed.url, signed.headers, body)).toBe(true);
  });

  it('verifySender(twilio) returns true when Twilio signed the URL with its default port', async () => {
    const signed = signTwilio({ authToken: token, url: 'https://hooks.example.com:443/wh?a=1', body: FORM_BODY, contentType: FORM });
    expect(await verifyAt('https://hooks.example.com/wh?a=1', signed.headers, FORM_BODY)).toBe(true);
  });

  it('verifySender(twilio) returns true when Twilio signed the URL without the port it was called on', async () => {
    const signed = signTwilio({ authToken: token, url: 'http://localhost/wh', body: FORM_BODY, contentType: FORM });
    expect(await verifyAt('http://localhost:3000/wh', signed.headers, FORM_BODY)).toBe(true);
  });

  it('verifySender(twilio) returns false for a different query string', async () => {
    const signed = signTwilio({ authToken: token, url: `${URL_BASE}?a=1`, body: FORM_BODY, contentType: FORM });
    expect(await verifyAt(`${URL_BASE}?a=2`, signed.headers, FORM_BODY)).toBe(false);
  });

  it('verifySender(twilio) returns true, as twilio.validateRequest does, when Twilio signed the URL as new URL() re-encodes it', async () => {
    const url = "https://hooks.example.com/wh?name=O'Brien";
    const signed = signTwilio({ authToken: token, url: new URL(url).toString(), body: FORM_BODY, contentType: FORM });
    const params = Object.fromEntries(new URLSearchParams(FORM_BODY));
    expect(senderSdks.twilio.validateRequest(token, signed.headers['x-twilio-signature']!, url, params)).toBe(true);
    expect(await verifyAt(url, signed.headers, FORM_BODY)).toBe(true);
  });
});

describe('verifySender(custom) header parsing', () => {
  const verifyCustom = (config: CustomSignatureConfig, headers: Record<string, string>) =>
    verifyDelivery({ service: 'custom', secrets: ['s'], custom: config }, requestOf({ headers }, BODY));

  it('verifySender(custom) returns false when the prefix is missing', async () => {
    const headers = signCustom(HEX_CUSTOM, 's', BODY);
    expect(await verifyCustom(HEX_CUSTOM, { 'x-signature': headers['x-signature']!.replace('sha256=', '') })).toBe(false);
  });

  it('verifySender(custom) returns true for a sha1 hex signature without prefix', async () => {
    const config: CustomSignatureConfig = { algorithm: 'sha1', header: 'x-sig', encoding: 'hex' };
    expect(await verifyCustom(config, signCustom(config, 's', BODY))).toBe(true);
  });

  it('verifySender(custom) returns false without the timestamp header', async () => {
    const { 'x-acme-signature': signature } = signCustom(TIMED_CUSTOM, 's', BODY, NOW);
    expect(await verifyCustom(TIMED_CUSTOM, { 'x-acme-signature': signature! })).toBe(false);
  });
});

describe('verifySender misconfiguration', () => {
  const request = requestOf({ headers: {} }, BODY);

  it('verifySender rejects with TypeError for an empty secret list', async () => {
    await expect(verifyDelivery({ service: 'github', secrets: [] }, request)).rejects.toThrow(TypeError);
  });

  it('verifySender rejects with TypeError for an empty secret', async () => {
    await expect(verifyDelivery({ service: 'github', secrets: ['ok', ''] }, request)).rejects.toThrow(TypeError);
  });

  it('rowOfSignature gives no row for custom without its settings', () => {
    expect(rowOfSignature({ service: 'custom' })).toBeUndefined();
  });
});
