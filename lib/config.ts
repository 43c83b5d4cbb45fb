import type { Node } from 'constructs';
import type { TunableSetting } from '../functions/manifest.js';
import type { AuthSettings } from './constructs/identity.js';

/** Everything a deployment may choose; the rest of the stack comes from `functions/manifest.ts`. */
export interface ServiceConfig {
  /** CloudFormation stack name; also the prefix of the flow state machines' names. */
  stackName: string;
  /** `retain` (default) keeps tables, the secrets key and the user pool when the stack is deleted. */
  dataRemovalPolicy: 'retain' | 'destroy';
  /** Public base of webhook URLs behind a custom domain, handed to the handlers as `PUBLIC_WEBHOOK_BASE_URL`. */
  publicWebhookBaseUrl?: string;
  auth: AuthSettings;
  /** Handler settings chosen in context, by variable; each goes to the functions that read it. */
  settings: Partial<Record<TunableSetting, string>>;
  /** Powertools log level of every function (`POWERTOOLS_LOG_LEVEL`); unset, the handlers log at INFO. */
  logLevel?: string;
}

/**
 * The handler settings a deployment may tune, by context key, with the bounds that keep each
 * working on AWS. A value out of bounds fails `cdk synth` rather than a request at run time.
 */
const TUNABLE_SETTINGS: Record<string, { env: TunableSetting } & ({ min: number; max: number; why: string } | { text: true })> = {
  // Lambda takes at most 6 MB per invocation, and a binary body arrives base64-encoded (4/3 larger).
  webhookMaxBodyBytes: { env: 'WEBHOOK_MAX_BODY_BYTES', min: 1, max: 4 * 1024 * 1024, why: 'Lambda takes 6 MB per invocation, binary bodies base64-encoded' },
  // API Gateway gives up on an integration after 30 s.
  waitTimeoutMs: { env: 'WAIT_TIMEOUT_MS', min: 1, max: 28_000, why: 'API Gateway gives up after 30 s' },
  // How stale an accepted request's trigger may be: a revoked key or secret works this long.
  triggerCacheTtlMs: { env: 'TRIGGER_CACHE_TTL_MS', min: 0, max: 60_000, why: 'a revocation must take effect within a minute' },
  totpIssuer: { env: 'TOTP_ISSUER', text: true },
};

/** Powertools' log levels. */
const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'];

const DEFAULT_STACK_NAME = 'Flowgate';

/**
 * Reads the deployment's choices from CDK context (`cdk.json` or `-c key=value`):
 * `stackName`, `dataRemovalPolicy`, `publicWebhookBaseUrl`, and either nothing (a Cognito user pool,
 * with `cognitoThreatProtection=true` for the Plus plan) or `authIssuer` + `authJwksUrl` + `authAudience`
 * (+ `authJwtAlgorithms`) for an external issuer; the handler settings
 * `webhookMaxBodyBytes`, `waitTimeoutMs`, `triggerCacheTtlMs`, `totpIssuer`, and `logLevel`.
 */
export function serviceConfigFromContext(node: Node): ServiceConfig {
  const text = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string' && typeof value !== 'boolean') throw new Error(`context ${key} must be a string`);
    return String(value);
  };

  const dataRemovalPolicy = text('dataRemovalPolicy') ?? 'retain';
  if (dataRemovalPolicy !== 'retain' && dataRemovalPolicy !== 'destroy') {
    throw new Error(`context dataRemovalPolicy must be "retain" or "destroy", not "${dataRemovalPolicy}"`);
  }

  const publicWebhookBaseUrl = text('publicWebhookBaseUrl')?.replace(/\/+$/, '');
  if (publicWebhookBaseUrl !== undefined) requireHttpsUrl('publicWebhookBaseUrl', publicWebhookBaseUrl);

  const issuer = text('authIssuer');
  const jwksUrl = text('authJwksUrl');
  let auth: AuthSettings;
  if (issuer === undefined && jwksUrl === undefined) {
    auth = { kind: 'cognito', threatProtection: text('cognitoThreatProtection') === 'true' };
  } else if (issuer !== undefined && jwksUrl !== undefined) {
    requireHttpsUrl('authJwksUrl', jwksUrl);
    // An issuer signs tokens for every app it serves; without an audience the gateway would take any of them.
    const audience = text('authAudience');
    if (audience === undefined) {
      throw new Error('context authAudience is required with authIssuer: without it the gateway accepts any token the issuer signs, for any app; set it to the `aud` your tokens carry (e.g. the app client id)');
    }
    const algorithms = (text('authJwtAlgorithms') ?? 'RS256').split(',').map((a) => a.trim()).filter(Boolean);
    auth = { kind: 'external', issuer, jwksUrl, audience, algorithms };
  } else {
    throw new Error('set both authIssuer and authJwksUrl in CDK context for an external issuer, or neither for the Cognito user pool');
  }

  const settings: ServiceConfig['settings'] = {};
  for (const [key, setting] of Object.entries(TUNABLE_SETTINGS)) {
    const raw: unknown = node.tryGetContext(key);
    if (raw === undefined || raw === null || raw === '') continue;
    if ('text' in setting) {
      // Authenticator apps show it as the issuer of `Issuer:account`, so a colon would split it.
      if (typeof raw !== 'string' || raw.includes(':') || raw.length > 100) throw new Error(`context ${key} must be text of at most 100 characters without ":"`);
      settings[setting.env] = raw;
      continue;
    }
    const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value) || value < setting.min || value > setting.max) {
      throw new Error(`context ${key} must be a whole number from ${setting.min} to ${setting.max} (${setting.why}), not "${String(raw)}"`);
    }
    settings[setting.env] = String(value);
  }

  const logLevel = text('logLevel')?.toUpperCase();
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel)) throw new Error(`context logLevel must be one of ${LOG_LEVELS.join(', ')}, not "${logLevel}"`);

  return { stackName: text('stackName') ?? DEFAULT_STACK_NAME, dataRemovalPolicy, publicWebhookBaseUrl, auth, settings, logLevel };
}

function requireHttpsUrl(key: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`context ${key} must be an absolute URL, not "${value}"`);
  }
  if (url.protocol !== 'https:') throw new Error(`context ${key} must be an https URL, not "${value}"`);
}
