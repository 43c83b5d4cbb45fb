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
