import { createPrivateKey, sign as signWith } from 'node:crypto';
import { sign as signWebhook } from '../../client/src/webhooks.js';
import { senderRow as catalogRow } from '../../functions/domain/webhooks/senders/catalog.js';
import type { SenderRow } from '../../functions/domain/webhooks/senders/catalog-types.js';
import { usage } from './errors.js';

/*
 * Signs a request as its sender would: the typed client's `webhooks.sign`, from the catalog rows and
 * checked by the receiver's own verifier. The client signs with a secret only; SendGrid signs its
 * Event Webhook with a private key of its own (ECDSA P-256 over `<timestamp><body>`, the catalog's
 * `ecdsa_p256` row), which `--secret-file` hands in here.
 */

export interface SignInput {
  /** The URL the request is sent to (Twilio, Square and HubSpot sign it). */
  url: string;
  body: Uint8Array;
  /** Headers the fixture set (an event id such as `svix-id`), which the content may sign. */
  headers: Record<string, string>;
  contentType: string;
  /** The signing secret as pasted on the trigger; for SendGrid, the PEM private key whose public key is on the trigger. */
  secret: string;
  nowSeconds: number;
}

export const senderRow = (id: string): SenderRow | undefined => catalogRow(id);

/** Every header to send, the signature's included. */
export async function signAs(id: string, input: SignInput): Promise<Record<string, string>> {
  const row = senderRow(id);
  if (!row) throw usage(`sender: unknown sender ${id}`);
  if (row.verification.primitive === 'ecdsa_p256') {
    let key;
    try {
      key = createPrivateKey(input.secret);
    } catch {
      throw usage(`${id} signs with a private key: pass --secret-file with the PEM private key whose public key is on the trigger`);
    }
    const ts = String(input.nowSeconds);
    const signature = signWith('sha256', Buffer.concat([Buffer.from(ts, 'utf8'), input.body]), key).toString('base64');
    return { ...input.headers, 'content-type': input.contentType, [row.verification.timestampHeader]: ts, [row.verification.signatureHeader]: signature };
  }
  try {
    const signed = await signWebhook(id, input.secret, input.body, { url: input.url, headers: input.headers, contentType: input.contentType, timestamp: input.nowSeconds });
    return signed.headers;
  } catch (error) {
    if (error instanceof TypeError) throw usage(error.message);
    throw error;
  }
}
