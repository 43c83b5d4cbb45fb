// The part of the braintree SDK (which ships no types) that the proofs use.
declare module 'braintree' {
  export const Environment: { Sandbox: unknown };
  export class BraintreeGateway {
    constructor(config: { environment: unknown; merchantId: string; publicKey: string; privateKey: string });
    webhookTesting: { sampleNotification(kind: string, id: string): Promise<{ bt_signature: string; bt_payload: string }> };
    webhookNotification: { parse(signature: string, payload: string): Promise<{ kind: string }> };
  }
  export const WebhookNotification: { Kind: Record<string, string> };
}
