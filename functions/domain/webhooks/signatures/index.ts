import { verifyCustom, type CustomSignatureConfig } from './custom.js';
import { verifyGithub } from './github.js';
import type { SignedRequest } from './request.js';
import { verifyShopify } from './shopify.js';
import { verifySlack } from './slack.js';
import { verifyStandardWebhooks } from './standard-webhooks.js';
import { verifyStripe } from './stripe.js';
import { verifyTwilio } from './twilio.js';

export type { CustomSignatureConfig } from './custom.js';
export type { SignedRequest } from './request.js';

/** The senders whose signature schemes are built in, plus a configurable `custom` HMAC. */
export type SignatureService = 'stripe' | 'github' | 'slack' | 'shopify' | 'twilio' | 'standard_webhooks' | 'custom';

export const SIGNATURE_SERVICES: readonly SignatureService[] = [
  'stripe',
  'github',
  'slack',
  'shopify',
  'twilio',
  'standard_webhooks',
  'custom',
];

/** How a webhook's requests are signed. */
export interface SignatureConfig {
  service: SignatureService;
  /** Several secrets allow rotation: a signature by any of them is accepted. */
  secrets: string[];
  /** Required when `service` is `custom`. */
  custom?: CustomSignatureConfig;
}

/**
 * True when `request` carries a valid, fresh signature by one of `config.secrets`.
 * Returns `false` for a missing, malformed, wrong or stale signature and never throws on
 * request content; throws `TypeError` only for a misconfiguration (no secret, an empty secret,
 * `custom` without its settings), which is a fault of ours rather than of the sender.
 */
export function verifySignature(config: SignatureConfig, request: SignedRequest): boolean {
  const { secrets } = config;
  // An empty key makes HMAC forgeable by anyone, so it must never reach a verifier.
  if (secrets.length === 0 || !secrets.every(Boolean)) {
    throw new TypeError('verifySignature: at least one non-empty secret is required');
  }
  switch (config.service) {
    case 'stripe':
      return verifyStripe(secrets, request);
    case 'github':
      return verifyGithub(secrets, request);
    case 'slack':
      return verifySlack(secrets, request);
    case 'shopify':
      return verifyShopify(secrets, request);
    case 'twilio':
      return verifyTwilio(secrets, request);
    case 'standard_webhooks':
      return verifyStandardWebhooks(secrets, request);
    case 'custom':
      if (!config.custom) throw new TypeError('verifySignature: service "custom" requires its settings');
      return verifyCustom(config.custom, secrets, request);
    default:
      throw new TypeError(`verifySignature: unknown service ${String(config.service)}`);
  }
}
