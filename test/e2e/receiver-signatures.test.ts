import { createHmac } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MESSAGE } from '../../functions/shared/errors.js';
import type { CustomSignatureConfig } from '../../functions/domain/webhooks/signatures/custom.js';
import { useLocalStack } from '../support/local-stack.js';
import {
  signCustom, signGithub, signShopify, signSlack, signStandardWebhooks, signStripe, signTwilio, type SignedHeaders,
} from '../support/signers.js';
import { createTrigger, deliver, TEST_FLOWS_DIR } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });

const nowSeconds = () => Math.floor(Date.now() / 1000);
const BODY = JSON.stringify({ id: 'evt_sig', type: 'invoice.paid', data: { amount: 100 } });
const CHANGED_BODY = JSON.stringify({ id: 'evt_sig', type: 'invoice.paid', data: { amount: 900 } });
const FORM = 'application/x-www-form-urlencoded';
const FORM_BODY = 'AccountSid=AC123&Body=Hello+there&From=%2B15551234567&MessageSid=SM1';
const CHANGED_FORM_BODY = 'AccountSid=AC123&Body=Hello+where&From=%2B15551234567&MessageSid=SM1';
const HEX_CUSTOM: CustomSignatureConfig = { algorithm: 'sha256', header: 'x-signature', encoding: 'hex', prefix: 'sha256=' };
const TIMED_CUSTOM: CustomSignatureConfig = { algorithm: 'sha512', header: 'x-acme-signature', encoding: 'base64', timestamp_header: 'x-acme-timestamp' };

interface Signed {
  headers: SignedHeaders;
  /** Where to send it, when the scheme signs the URL (Twilio's bodySHA256). */
  url?: string;
}

/** One sender's scheme as a trigger is configured for it, with a signer from the sender's SDK or docs. */
interface Scheme {
  name: string;
  signature: { service: string; secret: string; custom?: CustomSignatureConfig };
  otherSecret: string;
  signatureHeader: string;
  timestamped: boolean;
  contentType: string;
  body: string;
  changedBody: string;
  sign(input: { secret: string; body: string; timestamp: number; url: string }): Signed | Promise<Signed>;
}

const SCHEMES: Scheme[] = [
  {
    name: 'stripe',
    signature: { service: 'stripe', secret: 'whsec_stripe_e2e' },
    otherSecret: 'whsec_stripe_other',
    signatureHeader: 'stripe-signature',
    timestamped: true,
    contentType: 'application/json',
    body: BODY,
    changedBody: CHANGED_BODY,
    sign: ({ secret, body, timestamp }) => ({ headers: signStripe({ secret, body, timestamp }) }),
  },
  {
    name: 'github',
    signature: { service: 'github', secret: 'github-e2e' },
    otherSecret: 'github-other',
    signatureHeader: 'x-hub-signature-256',
    timestamped: false,
    contentType: 'application/json',
    body: BODY,
    changedBody: CHANGED_BODY,
    sign: async ({ secret, body }) => ({ headers: await signGithub({ secret, body }) }),
  },
  {
    name: 'slack',
    signature: { service: 'slack', secret: 'slack-e2e' },
    otherSecret: 'slack-other',
    signatureHeader: 'x-slack-signature',
    timestamped: true,
    contentType: 'application/json',
    body: BODY,
    changedBody: CHANGED_BODY,
    sign: ({ secret, body, timestamp }) => ({ headers: signSlack({ secret, body, timestamp }) }),
  },
  {
    name: 'shopify',
    signature: { service: 'shopify', secret: 'shpss_e2e' },
    otherSecret: 'shpss_other',
    signatureHeader: 'x-shopify-hmac-sha256',
    timestamped: false,
    contentType: 'application/json',
    body: BODY,
    changedBody: CHANGED_BODY,
    sign: ({ secret, body }) => ({ headers: signShopify({ secret, body }) }),
  },
  {
    name: 'twilio (form body)',
    signature: { service: 'twilio', secret: 'twilio-token-e2e' },
    otherSecret: 'twilio-token-other',
    signatureHeader: 'x-twilio-signature',
    timestamped: false,
    contentType: FORM,
    body: FORM_BODY,
    changedBody: CHANGED_FORM_BODY,
    sign: ({ secret, body, url }) => signTwilio({ authToken: secret, url, body, contentType: FORM }),
  },
  {
    name: 'twilio (JSON body, bodySHA256)',
    signature: { service: 'twilio', secret: 'twilio-token-e2e' },
    otherSecret: 'twilio-token-other',
    signatureHeader: 'x-twilio-signature',
    timestamped: false,
    contentType: 'application/json',
    body: BODY,
    changedBody: CHANGED_BODY,
    sign: ({ secret, body, url }) => signTwilio({ authToken: secret, url, body, contentType: 'application/json' }),
  },
  {
    name: 'standard_webhooks',
    signature: { service: 'standard_webhooks', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    otherSecret: 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=',
    signatureHeader: 'webhook-signature',
    timestamped: true,
    contentType: 'application/json',
    body: BODY,
    changedBody: CHANGED_BODY,
    sign: ({ secret, body, timestamp }) => ({ headers: signStandardWebhooks({ secret, id: 'msg_e2e', timestamp, body }) }),
  },
  {
    name: 'custom (prefixed hex, no timestamp)',
    signature: { service: 'custom', secret: 'custom-e2e', custom: HEX_CUSTOM },
    otherSecret: 'custom-other',
    signatureHeader: 'x-signature',
    timestamped: false,
    contentType: 'application/json',
    body: BODY,
    changedBody: CHANGED_BODY,
    sign: ({ secret, body }) => ({ headers: signCustom(HEX_CUSTOM, secret, body) }),
  },
  {
    name: 'custom (base64 SHA-512 with timestamp_header)',
    signature: { service: 'custom', secret: 'custom-e2e', custom: TIMED_CUSTOM },
    otherSecret: 'custom-other',
    signatureHeader: 'x-acme-signature',
    timestamped: true,
    contentType: 'application/json',
    body: BODY,
    changedBody: CHANGED_BODY,
    sign: ({ secret, body, timestamp }) => ({ headers: signCustom(TIMED_CUSTOM, secret, body, timestamp) }),
  },
];

/** Sends `body` signed by `scheme` over HTTP to a trigger configured for it. */
async function send(scheme: Scheme, options: { secret?: string; sentBody?: string; age?: number; dropSignature?: boolean } = {}) {
  const trigger = await createTrigger(stack, await stack.token('signature-owner'), { flow: 'echo', signature: scheme.signature });
  const signed = await scheme.sign({
    secret: options.secret ?? scheme.signature.secret,
    body: scheme.body,
    timestamp: nowSeconds() - (options.age ?? 0),
    url: trigger.url,
  });
  const headers: Record<string, string> = { 'content-type': scheme.contentType, ...signed.headers };
  if (options.dropSignature) delete headers[scheme.signatureHeader];
  return deliver(signed.url ?? trigger.url, options.sentBody ?? scheme.body, headers);
}

for (const scheme of SCHEMES) {
  describe(`${scheme.name} over HTTP`, () => {
    it('a valid signature is accepted', async () => {
      const res = await send(scheme);
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ status: 'accepted' });
    });

    it('a signature made with another secret is 401 invalid_signature', async () => {
      const res = await send(scheme, { secret: scheme.otherSecret });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: 'invalid_signature', message: DEFAULT_MESSAGE.invalid_signature });
    });

    it('a changed body is 401 invalid_signature', async () => {
      expect((await send(scheme, { sentBody: scheme.changedBody })).json).toEqual({ error: 'invalid_signature', message: DEFAULT_MESSAGE.invalid_signature });
    });

    it('a missing signature header is 401 invalid_signature', async () => {
      expect((await send(scheme, { dropSignature: true })).json).toEqual({ error: 'invalid_signature', message: DEFAULT_MESSAGE.invalid_signature });
    });

    if (scheme.timestamped) {
      it('a timestamp over 5 minutes old is 401 invalid_signature', async () => {
        expect((await send(scheme, { age: 360 })).json).toEqual({ error: 'invalid_signature', message: DEFAULT_MESSAGE.invalid_signature });
      });

      it('a timestamp over 5 minutes ahead is 401 invalid_signature', async () => {
        expect((await send(scheme, { age: -360 })).json).toEqual({ error: 'invalid_signature', message: DEFAULT_MESSAGE.invalid_signature });
      });
    }
  });
}

describe('several signatures in one header', () => {
  it('stripe: any v1 may match (one per secret while Stripe rolls the secret)', async () => {
    const trigger = await createTrigger(stack, await stack.token('signature-owner'), { flow: 'echo', signature: { service: 'stripe', secret: 'whsec_new' } });
    const t = nowSeconds();
    const old = signStripe({ secret: 'whsec_old', body: BODY, timestamp: t })['stripe-signature']!;
    const current = signStripe({ secret: 'whsec_new', body: BODY, timestamp: t })['stripe-signature']!;
    const header = `${old},${current.split(',').find((part) => part.startsWith('v1='))}`;
    expect((await deliver(trigger.url, BODY, { 'stripe-signature': header })).json).toMatchObject({ status: 'accepted' });
    expect((await deliver(trigger.url, BODY, { 'stripe-signature': old })).status).toBe(401);
  });

  it('standard_webhooks: any v1 signature in the space-separated list may match', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const trigger = await createTrigger(stack, await stack.token('signature-owner'), { flow: 'echo', signature: { service: 'standard_webhooks', secret } });
    const t = nowSeconds();
    const other = signStandardWebhooks({ secret: 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=', id: 'msg_2', timestamp: t, body: BODY });
    const right = signStandardWebhooks({ secret, id: 'msg_2', timestamp: t, body: BODY });
    const headers = { ...right, 'webhook-signature': `${other['webhook-signature']} ${right['webhook-signature']}` };
    expect((await deliver(trigger.url, BODY, headers)).json).toMatchObject({ status: 'accepted' });
  });
});

describe('twilio signs the URL the sender called', () => {
  it('including the api_key query parameter, when the trigger also has an API key', async () => {
    const authToken = 'twilio-token-e2e';
    const trigger = await createTrigger(stack, await stack.token('signature-owner'), { flow: 'echo', api_key_enabled: true, signature: { service: 'twilio', secret: authToken } });
    const url = `${trigger.url}?api_key=${trigger.api_key}`;
    const signed = signTwilio({ authToken, url, body: FORM_BODY, contentType: FORM });
    expect((await deliver(signed.url, FORM_BODY, signed.headers)).json).toMatchObject({ status: 'accepted' });
    // Signed for the bare URL but sent with the key in the query: not the URL Twilio signed.
    const bare = signTwilio({ authToken, url: trigger.url, body: FORM_BODY, contentType: FORM });
    expect((await deliver(url, FORM_BODY, bare.headers)).json).toEqual({ error: 'invalid_signature', message: DEFAULT_MESSAGE.invalid_signature });
  });

  it('a JSON body whose bodySHA256 does not match is refused even with a valid URL signature', async () => {
    const authToken = 'twilio-token-e2e';
    const trigger = await createTrigger(stack, await stack.token('signature-owner'), { flow: 'echo', signature: { service: 'twilio', secret: authToken } });
    const signed = signTwilio({ authToken, url: trigger.url, body: CHANGED_BODY, contentType: 'application/json' });
    expect((await deliver(signed.url, BODY, signed.headers)).json).toEqual({ error: 'invalid_signature', message: DEFAULT_MESSAGE.invalid_signature });
  });
});

describe('bodies that API Gateway base64-encodes', () => {
  const BOUNDARY = 'e2e-boundary';
  /** A multipart body with a text field and a binary file whose bytes are not UTF-8. */
  const FILE_BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x80, 0x0d, 0x0a]);
  const multipart = Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="type"\r\n\r\nupload.created\r\n`),
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="logo.png"\r\nContent-Type: image/png\r\n\r\n`),
    FILE_BYTES,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
  /** The custom scheme's header over raw bytes (the string signers would sign the UTF-8 of a string). */
  const signMultipart = (secret: string) => ({ [HEX_CUSTOM.header]: `sha256=${createHmac('sha256', secret).update(multipart).digest('hex')}` });

  it('a signed multipart body with binary content verifies over its exact bytes, and the file arrives intact', async () => {
    const secret = 'multipart-secret';
    const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...signMultipart(secret) };
    const trigger = await createTrigger(stack, await stack.token('signature-owner'), {
      flow: 'echo', response_mode: 'wait', signature: { service: 'custom', secret, custom: HEX_CUSTOM },
    });
    const res = await deliver(trigger.url, multipart, headers);
    expect(res.status).toBe(200);
    expect(res.json.received).toEqual({
      type: 'upload.created',
      file: { filename: 'logo.png', content_type: 'image/png', size: FILE_BYTES.length, content_base64: FILE_BYTES.toString('base64') },
    });
  });

  it('a signed multipart body with one byte changed is 401', async () => {
    const secret = 'multipart-secret';
    const trigger = await createTrigger(stack, await stack.token('signature-owner'), { flow: 'echo', signature: { service: 'custom', secret, custom: HEX_CUSTOM } });
    const tampered = Buffer.from(multipart);
    tampered[tampered.indexOf(0xff)] = 0xfd;
    const res = await deliver(trigger.url, tampered, { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...signMultipart(secret) });
    expect(res.json).toEqual({ error: 'invalid_signature', message: DEFAULT_MESSAGE.invalid_signature });
  });

  it('a signed JSON body that is not valid UTF-8 passes the signature check (raw bytes) and is then 400', async () => {
    const secret = 'github-e2e';
    const bytes = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]); // {"a":"<bad>"}
    const headers = { 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(bytes).digest('hex')}` };
    const trigger = await createTrigger(stack, await stack.token('signature-owner'), { flow: 'echo', signature: { service: 'github', secret } });
    const res = await deliver(trigger.url, bytes, headers);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.any(String) });
  });
});

describe('the webhook handler, called with an API Gateway payload 2.0 event', () => {
  const secret = 'handler-level-secret';
  const body = JSON.stringify({ id: 'evt_b64', type: 'push', note: 'café ☕' });

  function gatewayEvent(webhookId: string, headers: Record<string, string>, payload: { body: string; isBase64Encoded: boolean }): APIGatewayProxyEventV2 {
    const path = `/webhooks/${webhookId}`;
    return {
      version: '2.0',
      routeKey: 'ANY /webhooks/{webhook_id}',
      rawPath: path,
      rawQueryString: '',
      headers: { host: 'hooks.example.com', 'x-forwarded-proto': 'https', 'x-forwarded-port': '443', 'content-type': 'application/json', ...headers },
      pathParameters: { webhook_id: webhookId },
      requestContext: {
        accountId: '123456789012',
        apiId: 'api',
        domainName: 'hooks.example.com',
        domainPrefix: 'hooks',
        http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'GitHub-Hookshot/1' },
        requestId: 'req-1',
        routeKey: 'ANY /webhooks/{webhook_id}',
        stage: '$default',
        time: new Date().toUTCString(),
        timeEpoch: Date.now(),
      },
      ...payload,
    };
  }

  /** The stack's own receiver, called with crafted events. */
  const loadHandler = async () => stack.handlers.webhook;

  it('decodes a base64-encoded body before verifying: a signed JSON body is accepted', async () => {
    const trigger = await createTrigger(stack, await stack.token('handler-owner'), { flow: 'echo', signature: { service: 'github', secret } });
    const handler = await loadHandler();
    const headers = { ...(await signGithub({ secret, body })), 'x-github-delivery': 'delivery-b64' };
    const result = await handler(gatewayEvent(trigger.webhook_id, headers, { body: Buffer.from(body).toString('base64'), isBase64Encoded: true }));
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body!)).toEqual({ status: 'accepted', event_id: 'delivery-b64' });
  });

  it('the same base64 text taken as the body itself fails verification (the flag matters)', async () => {
    const trigger = await createTrigger(stack, await stack.token('handler-owner'), { flow: 'echo', signature: { service: 'github', secret } });
    const handler = await loadHandler();
    const signed = await signGithub({ secret, body });
    const result = await handler(gatewayEvent(trigger.webhook_id, signed, { body: Buffer.from(body).toString('base64'), isBase64Encoded: false }));
    expect(result.statusCode).toBe(401);
  });

  it('a plain-text body (isBase64Encoded false) verifies as sent', async () => {
    const trigger = await createTrigger(stack, await stack.token('handler-owner'), { flow: 'echo', signature: { service: 'github', secret } });
    const handler = await loadHandler();
    const result = await handler(gatewayEvent(trigger.webhook_id, await signGithub({ secret, body }), { body, isBase64Encoded: false }));
    expect(result.statusCode).toBe(200);
  });
});
