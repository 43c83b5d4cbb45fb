import { createRequire } from 'node:module';

/**
 * The senders' own SDKs (devDependencies), which the tests and the signatures bench use only to
 * prove that a signature is made and checked as the sender makes and checks it. They are loaded
 * with `require`, and typed here with the few calls made of them: their published types are about
 * 10,600 declaration files (Square 3,894, HubSpot 2,405, Adyen 2,353, Paddle 779, Twilio 747,
 * Slack 402), which every `tsc --noEmit` of `npm test` read, about half of its time, for calls
 * whose results the tests check anyway. Each loads on first use: Square and Adyen take about two
 * seconds each to load.
 */
const require = createRequire(import.meta.url);

export interface TwilioSdk {
  getExpectedTwilioSignature(authToken: string, url: string, params: Record<string, string | string[]>): string;
  getExpectedBodyHash(body: string): string;
  validateRequest(authToken: string, signature: string, url: string, params: Record<string, string | string[]>): boolean;
  validateRequestWithBody(authToken: string, signature: string, url: string, body: string): boolean;
  twiml: { MessagingResponse: new () => { message(body: string): unknown; toString(): string } };
}

interface AdyenHmacValidator {
  calculateHmac(item: never, hexKey: string): string;
  validateHMAC(item: never, hexKey: string): boolean;
}

interface HubSpotSignatureOptions {
  signature: string;
  clientSecret: string;
  requestBody: string;
  url: string;
  timestamp: number;
}

export interface SenderSdks {
  /** twilio-node's default export. */
  readonly twilio: TwilioSdk;
  /** `@slack/bolt`'s `verifySlackRequest`: throws when the request is not Slack's. */
  readonly verifySlackRequest: (options: { signingSecret: string; body: string; headers: { 'x-slack-signature': string; 'x-slack-request-timestamp': number } }) => void;
  /** `@adyen/api-library`'s `hmacValidator` class. */
  readonly AdyenHmacValidator: new () => AdyenHmacValidator;
  /** `@hubspot/api-client`'s `Signature`. */
  readonly HubSpotSignature: {
    getSignature(method: string, version: 'v3', options: HubSpotSignatureOptions): string;
    isValid(options: HubSpotSignatureOptions & { signatureVersion: 'v3'; method: string }): boolean;
  };
  /** `@paddle/paddle-node-sdk`'s `Paddle` client. */
  readonly Paddle: new (apiKey: string) => { webhooks: { isSignatureValid(body: string, secret: string, signature: string): Promise<boolean> } };
  /** `square`'s `WebhooksHelper`. */
  readonly SquareWebhooksHelper: { verifySignature(options: { requestBody: string; signatureHeader: string; signatureKey: string; notificationUrl: string }): Promise<boolean> };
}

export const senderSdks: SenderSdks = {
  get twilio() {
    return require('twilio');
  },
  get verifySlackRequest() {
    return require('@slack/bolt').verifySlackRequest;
  },
  get AdyenHmacValidator() {
    return require('@adyen/api-library').hmacValidator;
  },
  get HubSpotSignature() {
    return require('@hubspot/api-client').Signature;
  },
  get Paddle() {
    return require('@paddle/paddle-node-sdk').Paddle;
  },
  get SquareWebhooksHelper() {
    return require('square').WebhooksHelper;
  },
};
