import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWebhookBody } from '../../functions/domain/webhooks/body.js';
import { rowOfSignature } from '../../functions/domain/webhooks/senders/catalog.js';
import type { KeyFetcher } from '../../functions/domain/webhooks/senders/context.js';
import { verifySender } from '../../functions/domain/webhooks/senders/verify.js';
import type { CustomSignatureConfig } from '../../functions/domain/webhooks/signatures/custom.js';
import type { SignedRequest } from '../../functions/domain/webhooks/signatures/request.js';
import { AppError } from '../../functions/shared/errors.js';
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
const URL_BASE = 'https://hooks.example.com/webhooks/wh_1?tenant=a';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const CUSTOM: CustomSignatureConfig = {
  algorithm: 'sha256',
  header: 'x-signature',
  encoding: 'base64',
  prefix: 'sig=',
  timestamp_header: 'x-timestamp',
};

/** The six senders whose schemes were built in before the sender catalog, and `custom`: here, their catalog rows. */
const SIGNATURE_SERVICES = ['stripe', 'github', 'slack', 'shopify', 'twilio', 'standard_webhooks', 'custom'] as const;
type SignatureService = (typeof SIGNATURE_SERVICES)[number];

/** HMAC senders publish no keys: a verification that reaches for one fails loudly. */
const NO_KEYS: KeyFetcher = { fetchText: (url) => Promise.reject(new Error(`no key fetch expected (${url})`)) };

/** A delivery verified as the receiver verifies it: the trigger's catalog row (`rowOfSignature`), then `verifySender`. */
function verifyDelivery(service: SignatureService, request: SignedRequest): Promise<boolean> {
  const row = rowOfSignature({ service, ...(service === 'custom' && { custom: CUSTOM }) })!;
  return verifySender(row, { request, secrets: [SECRET], keys: NO_KEYS, method: 'POST' });
}

/**
 * Signs `body` the way each sender would. Twilio signs a JSON body through `bodySHA256`: its
 * form scheme signs decoded parameters, so some byte changes (`+` for a space) keep it valid.
 */
async function signFor(service: SignatureService, body: string): Promise<{ headers: Record<string, string>; url: string }> {
  const url = URL_BASE;
  switch (service) {
    case 'stripe':
      return { url, headers: signStripe({ secret: SECRET, body, timestamp: NOW }) };
    case 'github':
      return { url, headers: await signGithub({ secret: SECRET, body }) };
    case 'slack':
      return { url, headers: signSlack({ secret: SECRET, body, timestamp: NOW }) };
    case 'shopify':
      return { url, headers: signShopify({ secret: SECRET, body }) };
    case 'twilio':
      return signTwilio({ authToken: SECRET, url, body, contentType: 'application/json' });
    case 'standard_webhooks':
      return { url, headers: signStandardWebhooks({ secret: SECRET, id: 'msg_1', timestamp: NOW, body }) };
    case 'custom':
      return { url, headers: signCustom(CUSTOM, SECRET, body, NOW) };
  }
}

const CONTENT_TYPES = [
  'application/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=b',
  'multipart/form-data',
  'text/plain',
];

/** A valid multipart body (boundary `b`), cut short and with one byte changed: near-misses reach busboy's edge cases. */
const MULTIPART = Buffer.from(
  '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n' +
    '--b\r\nContent-Disposition: form-data; name="f"; filename="x.bin"\r\nContent-Type: application/octet-stream\r\n\r\nhello\r\n' +
    '--b--\r\n',
);
const damagedMultipart = fc
  .tuple(fc.nat({ max: MULTIPART.length }), fc.nat({ max: MULTIPART.length - 1 }), fc.integer({ min: 0, max: 255 }))
  .map(([length, index, mask]) => {
    const bytes = Uint8Array.from(MULTIPART);
    bytes[index]! ^= mask;
    return bytes.slice(0, length);
  });

/** Every header any verifier reads, so arbitrary values reach each parser. */
const HEADER_NAMES = [
  'stripe-signature',
  'x-hub-signature-256',
  'x-slack-signature',
  'x-slack-request-timestamp',
  'x-shopify-hmac-sha256',
  'x-twilio-signature',
  'content-type',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'x-signature',
  'x-timestamp',
];

/** Header values biased towards almost-valid shapes, where parsers are most likely to slip. */
const headerValue = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.stringMatching(/^t=\d{0,12},v1=[0-9a-f]{0,64}$/),
  fc.stringMatching(/^(sha256|v0|sig|v1)[=,][0-9a-zA-Z+/=]{0,90}$/),
  fc.constantFrom(String(NOW), 'application/x-www-form-urlencoded', '__proto__', ''),
);

describe('webhook properties', () => {
  it('parseWebhookBody rejects arbitrary bytes only with AppError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 512 }), damagedMultipart), fc.constantFrom(...CONTENT_TYPES), async (raw, contentType) => {
        const outcome = await parseWebhookBody(raw, contentType).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(outcome === undefined || outcome instanceof AppError).toBe(true);
      }),
    );
  });

  it('verifySender returns false, without throwing, for arbitrary headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SIGNATURE_SERVICES),
        fc.dictionary(fc.constantFrom(...HEADER_NAMES), headerValue),
        fc.uint8Array({ maxLength: 64 }),
        fc.oneof(fc.string(), fc.webUrl()),
        async (service, headers, rawBody, url) => {
          expect(await verifyDelivery(service, { rawBody, headers, url, nowSeconds: NOW })).toBe(false);
        },
      ),
    );
  });

  for (const service of SIGNATURE_SERVICES) {
    it(`verifySender(${service}) accepts every body its signer signs`, async () => {
      await fc.assert(
        // minLength 1: @octokit/webhooks-methods refuses to sign an empty payload.
        fc.asyncProperty(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }), async (body) => {
          const { headers, url } = await signFor(service, body);
          const request = { rawBody: Buffer.from(body), headers, url, nowSeconds: NOW };
          expect(await verifyDelivery(service, request)).toBe(true);
        }),
      );
    });

    it(`verifySender(${service}) refuses a body with one flipped byte`, async () => {
      const bodyAndFlip = fc
        .string({ unit: 'grapheme', minLength: 1, maxLength: 200 })
        .chain((body) =>
          fc.tuple(fc.constant(body), fc.nat({ max: Buffer.byteLength(body) - 1 }), fc.integer({ min: 1, max: 255 })),
        );
      await fc.assert(
        fc.asyncProperty(bodyAndFlip, async ([body, index, mask]) => {
          const { headers, url } = await signFor(service, body);
          const rawBody = Buffer.from(body);
          rawBody[index]! ^= mask;
          expect(await verifyDelivery(service, { rawBody, headers, url, nowSeconds: NOW })).toBe(false);
        }),
      );
    });
  }
  /** Form bodies rich in what the urlencoded parse treats specially: separators, `+`, and `%` escapes, valid or not. */
  const formBody = fc
    .array(fc.oneof(fc.constantFrom('&', '=', '+', '%', '%2', '%20', '%26', '%3D', '%2B', '%E9', '%C3%A9', '%F0%9F%98%80', '%zz', 'a', 'B', '0', 'é', '😀'), fc.string({ unit: 'grapheme', maxLength: 3 })), { maxLength: 40 })
    .map((parts) => parts.join(''));

  it('verifySender(twilio) accepts every form body twilio-node signs, parsed the WHATWG way', async () => {
    await fc.assert(
      fc.asyncProperty(formBody, async (body) => {
        const { url, headers } = signTwilio({ authToken: SECRET, url: URL_BASE, body, contentType: 'application/x-www-form-urlencoded' });
        expect(await verifyDelivery('twilio', { rawBody: Buffer.from(body), headers, url, nowSeconds: NOW })).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
