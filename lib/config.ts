import type { Node } from 'constructs';
import { parseCorsOrigins } from '../functions/cors.js';
import { SETTINGS, type SettingSpec } from '../functions/settings.js';
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
  /** Handler settings chosen in context, by variable; each goes to the functions the settings table names. */
  settings: Record<string, string>;
  /** Log level of every function (Lambda's application log level and `POWERTOOLS_LOG_LEVEL`); unset, INFO. */
  logLevel?: LogLevel;
  /** Most concurrent flow worker invocations the flow queue's event source starts. */
  flowWorkerMaxConcurrency: number;
  /** Most concurrent sweeper invocations the sweep queue's event source starts. */
  sweeperMaxConcurrency: number;
  /** Which MFA signing key signs: 1 at first, one more at each rotation (`lib/constructs/mfa-signing-key.ts`). */
  mfaSigningKeyGeneration: number;
  /** Exact origins whose web apps may call the gateway (CORS); empty, none may. */
  corsAllowedOrigins: string[];
  /** Default stage throttling of the HTTP API: the authenticated routes and the public ones without limits of their own. */
  apiThrottle: ThrottleLimits;
  /**
   * Route-level throttling of the public routes anyone can flood: the webhook receiver and `$default`
   * (unknown paths and CORS preflights), and each other route without credentials (the JWKS,
   * `/health`, `/openapi.json`, the console's files), each with a bucket of its own so that a flood
   * on them cannot take the authenticated routes' requests.
   */
  publicRouteThrottle: { webhooks: ThrottleLimits; defaultRoute: ThrottleLimits; publicReads: ThrottleLimits };
  /** Address subscribed to the alarm topic, if any. */
  alarmEmail?: string;
  /**
   * Deploys `flowgate listen`'s WebSocket endpoint (context `listenApi`: `true`); off by default,
   * since with it every delivery costs the receiver a query for listeners (a development feature).
   */
  listenApi: boolean;
  /**
   * Gives the receiver a Lambda function URL, and trigger URLs on it (context `webhookFunctionUrl`):
   * a webhook there is not an API Gateway request ($1.00 a million less) but has no API throttle.
   * On by default; off by default behind a custom domain (`publicWebhookBaseUrl`), whose trigger
   * URLs are the domain's, so that no second public door is opened beside it unasked.
   */
  webhookFunctionUrl: boolean;
  /**
   * The receiver's reserved concurrency (context `webhookReservedConcurrency`), unset by default: the
   * function URL's only bound on a flood, which otherwise may take the account's whole concurrency.
   */
  webhookReservedConcurrency?: number;
}

/**
 * The handler settings a deployment may tune: those of `functions/settings.ts` set by a context key,
 * checked here with the same parser the handler uses, so a value out of bounds fails `cdk synth`
 * rather than the function's init. The public webhook URL and the log level have rules of their own below.
 */
const TUNABLE_SETTINGS = (Object.values(SETTINGS) as SettingSpec<unknown>[]).filter(
  (setting) => setting.source.kind === 'context' && setting.env !== SETTINGS.publicWebhookBaseUrl.env && setting.env !== SETTINGS.logLevel.env,
);

/**
 * Lambda's bounds on an SQS event source's maximum concurrency.
 * https://docs.aws.amazon.com/lambda/latest/dg/API_ScalingConfig.html
 */
const SQS_MAX_CONCURRENCY_BOUNDS = { min: 2, max: 1000 };
/**
 * 20 worker invocations run up to 200 flows at once (batches of 10, run in parallel), while most of
 * an account's default 1,000 concurrent executions stay free for the gateway and everything else.
 */
export const DEFAULT_FLOW_WORKER_MAX_CONCURRENCY = 20;
/**
 * Sweeps are background work (a purge's old generation, an object store's expiry pass) that can
 * wait: 5 at once keep a burst of purges from taking the account's concurrent executions, which
 * the API shares, and each stream fetch may hold for up to 20 s.
 */
export const DEFAULT_SWEEPER_MAX_CONCURRENCY = 5;

/** Powertools' log levels, which context `logLevel` takes. */
const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const isLogLevel = (value: string): value is LogLevel => (LOG_LEVELS as readonly string[]).includes(value);

const DEFAULT_STACK_NAME = 'Flowgate';

export interface ThrottleLimits { rateLimit: number; burstLimit: number }

/**
 * The HTTP API's default stage throttling when context leaves it unset: 500 requests a second with
 * bursts of 1,000, well inside the account's default API Gateway quota of 10,000 requests a second
 * and bursts of 5,000 per Region, which every API in the account shares.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-throttling.html
 */
export const DEFAULT_API_THROTTLE = { rateLimit: 500, burstLimit: 1000 };
/**
 * The webhook receiver's own limits: 1,000 deliveries a second with bursts of 2,000, the ceiling a
 * busy trigger is promised, beside (not out of) the stage's 500 for everything else.
 */
export const DEFAULT_WEBHOOK_THROTTLE = { rateLimit: 1000, burstLimit: 2000 };
/**
 * `$default`'s own limits: it answers unknown paths (404/405) and CORS preflights, which browsers
 * cache for `CORS_MAX_AGE_SECONDS`; 100 a second is ample for that and small for a flood.
 */
export const DEFAULT_DEFAULT_ROUTE_THROTTLE = { rateLimit: 100, burstLimit: 200 };
/**
 * Each credential-free read's own limits (the JWKS, `/health`, `/openapi.json`, the console's
 * files): relying services cache the JWKS (jose's remote key set for 10 minutes), and a console
 * load is a handful of files, so 100 a second each is ample and small for a flood.
 */
export const DEFAULT_PUBLIC_READ_THROTTLE = { rateLimit: 100, burstLimit: 200 };
/** Bounds on context throttling: positive, and not beyond what a raised account quota could give. */
const API_THROTTLE_BOUNDS = { min: 1, max: 1_000_000, why: 'requests a second; the account quota still applies' };

/**
 * Reads the deployment's choices from CDK context (`cdk.json` or `-c key=value`):
 * `stackName`, `dataRemovalPolicy`, `publicWebhookBaseUrl`, and either nothing (a Cognito user pool,
 * with `cognitoThreatProtection=true` for the Plus plan and `cognitoDomainPrefix` for its hosted UI) or `authIssuer` + `authJwksUrl` + `authAudience`
 * (+ `authJwtAlgorithms`) for an external issuer; the handler settings
 * `webhookMaxBodyBytes`, `waitTimeoutMs`, `triggerCacheTtlMs`, `totpIssuer`, `adminGroup`, and `logLevel`; and
 * `flowWorkerMaxConcurrency`, `sweeperMaxConcurrency`, `mfaSigningKeyGeneration`; `corsAllowedOrigins`, `apiThrottleRateLimit`, `apiThrottleBurstLimit`,
 * `webhookThrottleRateLimit`, `webhookThrottleBurstLimit`, `defaultRouteThrottleRateLimit`,
 * `defaultRouteThrottleBurstLimit`, `publicReadThrottleRateLimit`, `publicReadThrottleBurstLimit`, `alarmEmail`, `listenApi`,
 * `webhookFunctionUrl` and `webhookReservedConcurrency`.
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
    const domainPrefix = text('cognitoDomainPrefix');
    // Cognito's rule for prefix domains: lower-case letters, digits and hyphens, and none of its reserved words.
    if (domainPrefix !== undefined && (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(domainPrefix) || /aws|amazon|cognito/.test(domainPrefix))) {
      throw new Error(`context cognitoDomainPrefix must be lower-case letters, digits and hyphens (at most 63) without "aws", "amazon" or "cognito", not "${domainPrefix}"`);
    }
    auth = { kind: 'cognito', threatProtection: text('cognitoThreatProtection') === 'true', ...(domainPrefix && { domainPrefix }) };
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
  for (const setting of TUNABLE_SETTINGS) {
    const key = (setting.source as { key: string }).key;
    const raw: unknown = node.tryGetContext(key);
    if (raw === undefined || raw === null || raw === '') continue;
    if (typeof raw !== 'string' && typeof raw !== 'number') throw new Error(`context ${key} must be a string or a number`);
    try {
      setting.parse(String(raw));
    } catch (error) {
      throw new Error(`context ${key} ${(error as Error).message}`);
    }
    settings[setting.env] = String(raw);
  }

  const maxConcurrency = (key: string, fallback: number) => {
    const raw: unknown = node.tryGetContext(key);
    return raw === undefined || raw === null || raw === ''
      ? fallback
      : wholeNumber(key, raw, { ...SQS_MAX_CONCURRENCY_BOUNDS, why: "Lambda's range for an SQS event source" });
  };
  const flowWorkerMaxConcurrency = maxConcurrency('flowWorkerMaxConcurrency', DEFAULT_FLOW_WORKER_MAX_CONCURRENCY);
  const sweeperMaxConcurrency = maxConcurrency('sweeperMaxConcurrency', DEFAULT_SWEEPER_MAX_CONCURRENCY);

  const rawGeneration: unknown = node.tryGetContext('mfaSigningKeyGeneration');
  const mfaSigningKeyGeneration = rawGeneration === undefined || rawGeneration === null || rawGeneration === ''
    ? 1
    : wholeNumber('mfaSigningKeyGeneration', rawGeneration, { min: 1, max: 1_000_000, why: 'one more at each rotation of the MFA signing key' });

  const logLevel = text('logLevel')?.toUpperCase();
  if (logLevel !== undefined && !isLogLevel(logLevel)) throw new Error(`context logLevel must be one of ${LOG_LEVELS.join(', ')}, not "${logLevel}"`);

  const corsAllowedOrigins = parseCorsOrigins(node.tryGetContext('corsAllowedOrigins'), 'context corsAllowedOrigins');

  const optionalNumber = (key: string, fallback: number) => {
    const raw: unknown = node.tryGetContext(key);
    return raw === undefined || raw === null || raw === '' ? fallback : wholeNumber(key, raw, API_THROTTLE_BOUNDS);
  };
  const throttle = (prefix: string, fallback: ThrottleLimits): ThrottleLimits => ({
    rateLimit: optionalNumber(`${prefix}RateLimit`, fallback.rateLimit),
    burstLimit: optionalNumber(`${prefix}BurstLimit`, fallback.burstLimit),
  });
  const apiThrottle = throttle('apiThrottle', DEFAULT_API_THROTTLE);
  const publicRouteThrottle = {
    webhooks: throttle('webhookThrottle', DEFAULT_WEBHOOK_THROTTLE),
    defaultRoute: throttle('defaultRouteThrottle', DEFAULT_DEFAULT_ROUTE_THROTTLE),
    publicReads: throttle('publicReadThrottle', DEFAULT_PUBLIC_READ_THROTTLE),
  };

  const alarmEmail = text('alarmEmail');
  // SNS sends the address a confirmation; one that cannot receive it only fails silently.
  if (alarmEmail !== undefined && !/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/.test(alarmEmail)) {
    throw new Error(`context alarmEmail must be one email address, not "${alarmEmail}"`);
  }

  /** A true-or-false context value (`-c key=true` arrives as text), `fallback` when unset. */
  const flag = (key: string, fallback: boolean): boolean => {
    const raw: unknown = node.tryGetContext(key);
    if (![undefined, null, '', true, false, 'true', 'false'].includes(raw as never)) throw new Error(`context ${key} must be true or false, not "${String(raw)}"`);
    return raw === undefined || raw === null || raw === '' ? fallback : raw === true || raw === 'true';
  };
  const listenApi = flag('listenApi', false);
  const webhookFunctionUrl = flag('webhookFunctionUrl', publicWebhookBaseUrl === undefined);
  const rawReserved: unknown = node.tryGetContext('webhookReservedConcurrency');
  const webhookReservedConcurrency = rawReserved === undefined || rawReserved === null || rawReserved === ''
    ? undefined
    // Lambda keeps at least 100 of an account's concurrency unreserved; 1 would refuse nearly every delivery.
    : wholeNumber('webhookReservedConcurrency', rawReserved, { min: 2, max: 10_000, why: 'reserved concurrency the receiver alone may use' });

  return {
    listenApi, webhookFunctionUrl, ...(webhookReservedConcurrency !== undefined && { webhookReservedConcurrency }),
    stackName: text('stackName') ?? DEFAULT_STACK_NAME,
    dataRemovalPolicy, publicWebhookBaseUrl, auth, settings, logLevel, flowWorkerMaxConcurrency, sweeperMaxConcurrency, mfaSigningKeyGeneration,
    corsAllowedOrigins, apiThrottle, publicRouteThrottle, alarmEmail,
  };
}

/** A context value that must be a whole number within bounds (a number, or a string of digits). */
function wholeNumber(key: string, raw: unknown, bounds: { min: number; max: number; why: string }): number {
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < bounds.min || value > bounds.max) {
    throw new Error(`context ${key} must be a whole number from ${bounds.min} to ${bounds.max} (${bounds.why}), not "${String(raw)}"`);
  }
  return value;
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
