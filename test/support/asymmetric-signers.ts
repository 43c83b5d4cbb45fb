/**
 * Requests signed as Amazon SNS and PayPal sign them, with a test certificate standing in for
 * theirs. Written from the senders' documentation (neither publishes a signing library):
 * https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html and
 * https://developer.paypal.com/api/rest/webhooks/rest/.
 */
import { sign, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';

/** `buffer-crc32`'s ESM types declare no default export although its ESM build has one: load the CommonJS build. */
const crc32 = createRequire(import.meta.url)('buffer-crc32') as { unsigned(input: string | Buffer): number };

export type SnsMessage = Record<string, string>;

const SNS_FIELDS: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

/** An SNS notification's fields before signing, as in AWS's example message. */
export function snsNotification(overrides: Partial<SnsMessage> = {}): SnsMessage {
  return {
    Type: 'Notification',
    MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
    TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
    Subject: 'My First Message',
    Message: 'Hello world!\nwith a second line',
    Timestamp: '2023-11-14T22:13:20.000Z',
    SigningCertURL: 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem',
    UnsubscribeURL: 'https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-west-2:123456789012:MyTopic:c9135db0',
    ...overrides,
  };
}

/** A SubscriptionConfirmation's fields before signing. */
export function snsSubscriptionConfirmation(overrides: Partial<SnsMessage> = {}): SnsMessage {
  return {
    Type: 'SubscriptionConfirmation',
    MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
    Token: '2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736',
    TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
    Message: 'You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:MyTopic.\nTo confirm the subscription, visit the SubscribeURL included in this message.',
    SubscribeURL: 'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37',
    Timestamp: '2023-11-14T22:13:20.000Z',
    SigningCertURL: 'https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem',
    ...overrides,
  };
}

/** The canonical string AWS signs: `Key\nValue\n` for each documented field present, in order. */
export function snsStringToSign(message: SnsMessage): string {
  return (SNS_FIELDS[message.Type!] ?? []).filter((name) => name in message).map((name) => `${name}\n${message[name]}\n`).join('');
}

/** The message with `SignatureVersion` and `Signature` added, as the JSON body SNS posts. */
export function signSns(message: SnsMessage, privateKey: KeyObject, version: '1' | '2' = '2'): string {
  const signature = sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(snsStringToSign(message)), privateKey).toString('base64');
  return JSON.stringify({ ...message, SignatureVersion: version, Signature: signature }, null, 2);
}

export interface PayPalDelivery {
  body: string;
  webhookId: string;
  transmissionId?: string;
  /** RFC 3339, e.g. 2023-11-14T22:13:20Z */
  transmissionTime: string;
  certUrl?: string;
}

export const PAYPAL_CERT_URL = 'https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-90621ecd';

/**
 * PayPal's headers: SHA256withRSA over `id|time|webhookId|crc32(body)`, the CRC as an unsigned decimal
 * computed with `buffer-crc32` as PayPal's own Node sample does (the verifier uses node:zlib).
 */
export function signPayPal(delivery: PayPalDelivery, privateKey: KeyObject): Record<string, string> {
  const id = delivery.transmissionId ?? '69cd13f0-d67a-11e5-baa3-778b53f4ae55';
  const signed = `${id}|${delivery.transmissionTime}|${delivery.webhookId}|${crc32.unsigned(delivery.body)}`;
  return {
    'PAYPAL-TRANSMISSION-ID': id,
    'PAYPAL-TRANSMISSION-TIME': delivery.transmissionTime,
    'PAYPAL-TRANSMISSION-SIG': sign('sha256', Buffer.from(signed), privateKey).toString('base64'),
    'PAYPAL-CERT-URL': delivery.certUrl ?? PAYPAL_CERT_URL,
    'PAYPAL-AUTH-ALGO': 'SHA256withRSA',
  };
}
