import type { HmacParams } from '../senders/catalog-types.js';
import { hmacParamsFromCustomConfig, senderRow } from '../senders/catalog.js';
import { keyBytes, verifyHmac } from '../senders/primitives/hmac.js';
import type { CustomSignatureConfig } from './custom.js';
import type { SignedRequest } from './request.js';
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
    case 'github':
    case 'slack':
    case 'shopify':
      return verifyHmac(ROW_PARAMS[config.service], { request, secrets, method: 'POST' });
    case 'standard_webhooks': {
      const params = ROW_PARAMS.standard_webhooks;
      // A secret that decodes to no key is a configuration error, not a bad request (as before the catalog).
      if (!secrets.every((secret) => keyBytes(params.key, secret)?.length)) {
        throw new TypeError('standard_webhooks secret decodes to an empty key');
      }
      return verifyHmac(params, { request, secrets, method: 'POST' });
    }
    case 'twilio':
      return verifyTwilio(secrets, request);
    case 'custom':
      if (!config.custom) throw new TypeError('verifySignature: service "custom" requires its settings');
      return verifyHmac(customParams(config.custom), { request, secrets, method: 'POST' });
    default:
      throw new TypeError(`verifySignature: unknown service ${String(config.service)}`);
  }
}

/** The built-in schemes are the sender catalog's rows: one implementation, the HMAC primitive. */
const ROW_PARAMS = {
  stripe: hmacRow('stripe'),
  github: hmacRow('github'),
  slack: hmacRow('slack'),
  shopify: hmacRow('shopify'),
  standard_webhooks: hmacRow('standard_webhooks'),
};

function hmacRow(id: string): HmacParams {
  const verification = senderRow(id)?.verification;
  if (verification?.primitive !== 'hmac') throw new TypeError(`sender catalog: ${id} is not an HMAC row`);
  return verification;
}

/** A trigger's custom settings as HMAC parameters, converted once per settings object (the receiver caches triggers). */
const customParamsCache = new WeakMap<CustomSignatureConfig, HmacParams>();

function customParams(config: CustomSignatureConfig): HmacParams {
  let params = customParamsCache.get(config);
  if (!params) customParamsCache.set(config, (params = hmacParamsFromCustomConfig(config)));
  return params;
}
