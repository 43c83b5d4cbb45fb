import { Buffer } from 'node:buffer';

export const KB = 1024;

/**
 * A Stripe-shaped event (`invoice.paid`) serialised to exactly `bytes` bytes, padded in a
 * description field, so every sender's verifier hashes the same, realistic JSON.
 */
export function jsonEvent(bytes: number, id = 'evt_1QbenchAbCdEfGhIjKlMnOp'): string {
  const event = {
    id,
    object: 'event',
    api_version: '2024-06-20',
    created: 1_732_000_000,
    type: 'invoice.paid',
    livemode: false,
    pending_webhooks: 1,
    request: { id: 'req_bench', idempotency_key: 'bench-key' },
    data: {
      object: {
        id: 'in_1QbenchInvoice',
        object: 'invoice',
        amount_due: 4200,
        amount_paid: 4200,
        currency: 'eur',
        customer: 'cus_bench',
        status: 'paid',
        lines: { object: 'list', data: [{ id: 'il_1', amount: 4200, description: 'Flowgate Pro (monthly)', quantity: 1 }] },
        description: '',
      },
    },
  };
  return pad(JSON.stringify(event), bytes, (filler) => {
    event.data.object.description = filler;
    return JSON.stringify(event);
  });
}

/** A Twilio-style form body (an incoming SMS) of exactly `bytes` bytes. */
export function formEvent(bytes: number): string {
  const fields = (body: string) =>
    new URLSearchParams({
      ToCountry: 'US', ToState: 'CA', SmsMessageSid: 'SM0123456789abcdef0123456789abcdef', NumMedia: '0',
      ToCity: 'SAN FRANCISCO', FromZip: '94105', SmsSid: 'SM0123456789abcdef0123456789abcdef', FromState: 'CA',
      SmsStatus: 'received', FromCity: 'SAN FRANCISCO', Body: body, FromCountry: 'US', To: '+15005550006',
      ToZip: '94105', NumSegments: '1', MessageSid: 'SM0123456789abcdef0123456789abcdef',
      AccountSid: 'AC0123456789abcdef0123456789abcdef', From: '+15551234567', ApiVersion: '2010-04-01',
    }).toString();
  return pad(fields(''), bytes, fields);
}

/** Fills with lower-case letters, which encode as one byte in both JSON and forms. */
function pad(empty: string, bytes: number, withFiller: (filler: string) => string): string {
  const missing = bytes - Buffer.byteLength(empty);
  if (missing < 0) throw new RangeError(`a body of ${bytes} bytes is too small for the event (${Buffer.byteLength(empty)})`);
  const text = withFiller('abcdefghijklmnopqrstuvwxyz'.repeat(Math.ceil(missing / 26)).slice(0, missing));
  if (Buffer.byteLength(text) !== bytes) throw new Error('padding went wrong');
  return text;
}

/**
 * A Stripe `invoice.paid` event of exactly `bytes` bytes made of what real events hold: ids of
 * random base62, amounts, timestamps and repeated keys, so it compresses as real payloads do
 * (about 2x at 1 KB) rather than as the letter run of `jsonEvent` does. Deterministic by `seed`.
 */
export function realisticEvent(bytes: number, id: string, seed = 1): string {
  let state = seed >>> 0 || 1;
  const random = () => (state = Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x9e3779b9 >>> 0) / 2 ** 32;
  const base62 = (length: number) => Array.from({ length }, () => '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[Math.floor(random() * 62)]).join('');
  const created = 1_732_000_000 + Math.floor(random() * 1e6);
  const lines: unknown[] = [];
  const event = {
    id, object: 'event', api_version: '2024-06-20', created, type: 'invoice.paid', livemode: false, pending_webhooks: 1,
    request: { id: `req_${base62(14)}`, idempotency_key: `${base62(8)}-${base62(4)}-${base62(4)}-${base62(12)}` },
    data: {
      object: {
        id: `in_1${base62(23)}`, object: 'invoice', account_country: 'DE', amount_due: 4200, amount_paid: 4200, currency: 'eur',
        customer: `cus_${base62(14)}`, customer_email: `${base62(7).toLowerCase()}@example.com`, status: 'paid', period_start: created - 2_592_000, period_end: created,
        lines: { object: 'list', data: lines, has_more: false },
        metadata: { ref: '' },
      },
    },
  };
  const text = () => JSON.stringify(event);
  const descriptions = ['Flowgate Pro (monthly)', 'Extra seats', 'Webhook add-on', 'Support plan'];
  while (Buffer.byteLength(text()) < bytes - 200) {
    lines.push({ id: `il_1${base62(23)}`, amount: Math.floor(random() * 10_000), description: descriptions[Math.floor(random() * descriptions.length)], quantity: 1 + Math.floor(random() * 5), price: `price_1${base62(23)}` });
  }
  return pad(text(), bytes, (filler) => {
    // The filler stands for one more id's worth of random characters, not a run of letters.
    event.data.object.metadata.ref = filler.length ? base62(filler.length) : '';
    return text();
  });
}
