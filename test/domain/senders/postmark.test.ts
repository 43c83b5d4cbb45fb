/**
 * Postmark webhooks, proven from Postmark's documentation (no signature, no verifying library):
 * credentials put in the webhook URL (`https://username:password@…`) are sent as HTTP Basic auth.
 * https://postmarkapp.com/developer/webhooks/webhooks-overview ("Basic HTTP authentication")
 * The genuine request's Authorization header is the one Node's own HTTP client derives from such
 * a URL (percent-decoding the parts, as RFC 3986 user info requires), captured on a local server.
 */
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** The catalog's `postmark` row. */
const POSTMARK = rowOf('postmark');
const PASTED = 'postmark-hooks:p@ss:w0rd';
const BODY = JSON.stringify({ RecordType: 'Delivery', ServerID: 23, MessageID: '00000000-0000-0000-0000-000000000000', Recipient: 'john@example.com' });

/** The headers a client sends when posting to `http://<user>:<password>@127.0.0.1/…` (a local stand-in for the webhook URL). */
async function headersSentTo(userInfo: string): Promise<IncomingHttpHeaders> {
  const server = createServer((_req, res) => res.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const seen = new Promise<IncomingHttpHeaders>((resolve) => server.once('request', (req) => resolve(req.headers)));
  await new Promise<void>((resolve, reject) => {
    const outgoing = request(new URL(`http://${userInfo}@127.0.0.1:${port}/webhooks/wh_1`), { method: 'POST' }, (res) => res.resume().on('end', resolve));
    outgoing.on('error', reject).end(BODY);
  });
  server.close();
  return seen;
}

const verify = (headers: IncomingHttpHeaders | Record<string, string>, secrets = [PASTED], body = BODY) =>
  verifySender(POSTMARK, contextFor({ body, headers: headers as Record<string, string>, secrets }));

describe('postmark: HTTP Basic from credentials in the webhook URL', () => {
  it('a genuine request passes (user info percent-encoded in the URL, as it must be)', async () => {
    expect(await verify(await headersSentTo('postmark-hooks:p%40ss%3Aw0rd'))).toBe(true);
  });

  it('another password fails', async () => {
    expect(await verify(await headersSentTo('postmark-hooks:guess'))).toBe(false);
  });

  it('a request without credentials fails', async () => {
    expect(await verify({ 'content-type': 'application/json' })).toBe(false);
  });

  it('a changed body still passes: Basic auth authenticates Postmark, it does not sign the body', async () => {
    expect(await verify(await headersSentTo('postmark-hooks:p%40ss%3Aw0rd'), [PASTED], '{}')).toBe(true);
  });

  it('credential rotation: either of two passes', async () => {
    expect(await verify(await headersSentTo('postmark-hooks:p%40ss%3Aw0rd'), ['postmark-hooks:old', PASTED])).toBe(true);
  });

  it('checkSenderSecret accepts username:password, a colon in the password included', () => {
    expect(checkSenderSecret(POSTMARK, PASTED)).toBeUndefined();
  });
});
