import { senderSdks } from '../../support/sender-sdks.js';
import { describe, expect, it } from 'vitest';
import { proveHmacSender, rowOf, verifySent, type SentRequest } from '../../support/sender-proof.js';

// Signed by @adyen/api-library's HmacValidator#calculateHmac (per notification item, over
// `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`
// with the hex-decoded key), checked by its HmacValidator#validateHMAC.
const validator = new senderSdks.AdyenHmacValidator();
const KEY_ONE = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const KEY_TWO = '11223344D785FBAE710E7F943F307971BB61B21281C98C9129B3D4018A57B2EB';

type Item = { NotificationRequestItem: Record<string, unknown> & { additionalData: Record<string, string> } };

function item(psp: string, key: string, overrides: Record<string, unknown> = {}): Item {
  const fields = {
    amount: { currency: 'EUR', value: 1130 },
    eventCode: 'AUTHORISATION',
    eventDate: '2024-01-01T01:00:00+01:00',
    merchantAccountCode: 'ProofMerchant',
    merchantReference: 'order-1',
    paymentMethod: 'visa',
    pspReference: psp,
    success: 'true',
    ...overrides,
  };
  return { NotificationRequestItem: { ...fields, additionalData: { hmacSignature: validator.calculateHmac(fields as never, key) } } };
}

const notification = (items: Item[]): SentRequest => ({ body: JSON.stringify({ live: 'false', notificationItems: items }), headers: { 'Content-Type': 'application/json' } });
const itemsOf = (sent: SentRequest): Item[] => JSON.parse(sent.body.toString()).notificationItems;

proveHmacSender('adyen', {
  secret: KEY_ONE,
  otherSecret: KEY_TWO,
  sign: (key) => notification([item('7914073381342284', key)]),
  // Adyen signs these fields, not the body: a changed amount must fail.
  tamper: (sent) => notification(itemsOf(sent).map((i) => ({ NotificationRequestItem: { ...i.NotificationRequestItem, amount: { currency: 'EUR', value: 1 } } }))),
  withoutSignature: (sent) => notification(itemsOf(sent).map((i) => ({ NotificationRequestItem: { ...i.NotificationRequestItem, additionalData: {} } }))),
  official: (sent, key) => itemsOf(sent).every((i) => validator.validateHMAC(i.NotificationRequestItem as never, key)),
});

describe('adyen (Adyen) notification items', () => {
  const row = rowOf('adyen');

  it('verifySender(adyen) returns true when every item is signed', async () => {
    expect(await verifySent(row, notification([item('psp_1', KEY_ONE), item('psp_2', KEY_ONE, { originalReference: 'psp_0', eventCode: 'REFUND' })]), [KEY_ONE])).toBe(true);
  });

  it('verifySender(adyen) returns false when one item of several is not signed by the key', async () => {
    expect(await verifySent(row, notification([item('psp_1', KEY_ONE), item('psp_2', KEY_TWO)]), [KEY_ONE])).toBe(false);
  });

  it('verifySender(adyen) returns false for an empty notificationItems', async () => {
    expect(await verifySent(row, notification([]), [KEY_ONE])).toBe(false);
  });

  it('verifySender(adyen) returns true for a change outside the signed fields (Adyen does not sign them)', async () => {
    const [signed] = itemsOf(notification([item('psp_1', KEY_ONE)]));
    const changed = { NotificationRequestItem: { ...signed!.NotificationRequestItem, paymentMethod: 'mc' } };
    expect(await verifySent(row, notification([changed]), [KEY_ONE])).toBe(true);
  });

  it('verifySender(adyen) returns false for a key that is not hex', async () => {
    expect(await verifySent(row, notification([item('psp_1', KEY_ONE)]), ['not-a-hex-key'])).toBe(false);
  });
});
