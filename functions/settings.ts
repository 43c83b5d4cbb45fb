/**
 * The settings table, beside the route table in `manifest.ts`: every environment variable a
 * function reads, what sets it, its default and bounds, and which functions receive it.
 *
 * - `lib/` builds each function's environment from it (wiring values from the constructs, tunable
 *   values from CDK context), and validates context values against the same parsers at synth.
 * - The local stack builds the same settings from its own config object, never from or into
 *   `process.env`, so two local stacks can share one process.
 * - Handler entry files read their settings through {@link readSettings} once, at init: a missing
 *   or malformed value stops the init with an error naming the variable (Lambda reports it as an
 *   init failure), rather than surfacing on some later request.
 *
 * Nothing here imports AWS or CDK code, so handlers can import it too.
 */
import { DEFAULT_WEBHOOK_MAX_BODY_BYTES, MAX_WEBHOOK_BODY_BYTES } from './domain/webhooks/body-limit.js';
// From the limits module, not the worker's use case: settings are in every bundle, the use case only in the worker's.
import { DEFAULT_RETRY_BASE_SECONDS, MAX_RETRY_DELAY_SECONDS } from './domain/flows/limits.js';
import { MAX_WAIT_TIMEOUT_MS } from './domain/webhooks/wait-budget.js';
import { FUNCTIONS, QUEUES, ROUTES, TABLES, TAGS, type FunctionName, type QueueName, type TableName } from './manifest.js';

/** Who gives a setting its value. */
export type SettingSource =
  /** The CDK stack (a table name, queue URL, ARN) and the local stack (its engines). */
  | { kind: 'wiring' }
  /** A deployment option: CDK context `key`; locally the environment of `npm start`. */
  | { kind: 'context'; key: string }
  /** Only the local stack sets it; deployed it never exists. */
  | { kind: 'local' };

export interface SettingSpec<T> {
  /** The environment variable. */
  env: string;
  source: SettingSource;
  /** The functions that receive (and may read) it. */
  readers: readonly FunctionName[];
  /** The value from the variable's text, its default when unset; throws a message on a bad value. */
  parse(raw: string | undefined): T;
}

/** A setting's value was missing or out of bounds; names the variable. */
export class SettingsError extends Error {
  constructor(readonly variable: string, why: string) {
    super(`setting ${variable} ${why} (see functions/settings.ts)`);
    this.name = 'SettingsError';
  }
}

type Parse<T> = (raw: string | undefined) => T;
const isUnset = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

const required: Parse<string> = (raw) => {
  if (isUnset(raw)) throw new Error('is required');
  return raw;
};
const optional: Parse<string | undefined> = (raw) => (isUnset(raw) ? undefined : raw);
const text = (fallback: string, check: (value: string) => string | undefined = () => undefined): Parse<string> => (raw) => {
  const value = isUnset(raw) ? fallback : raw;
  const problem = check(value);
  if (problem) throw new Error(problem);
  return value;
};
const wholeNumber = (fallback: number, min: number, max: number): Parse<number> => (raw) => {
  if (isUnset(raw)) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new Error(`must be a whole number from ${min} to ${max}, not "${raw}"`);
  return value;
};
const list: Parse<string[]> = (raw) => (raw ?? '').split(',').map((item) => item.trim()).filter(Boolean);
/** A KMS key's ARN (a single- or multi-Region key), which an IAM grant can name; not a key id or an alias. */
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})$/;
const kmsKeyArns: Parse<string[]> = (raw) => {
  const arns = list(raw);
  for (const arn of arns) {
    if (!KMS_KEY_ARN.test(arn)) {
      throw new Error(`must be KMS key ARNs, comma-separated (arn:aws:kms:<region>:<account>:key/<key id>, as the output MfaSigningKeyArn shows the key before a rotation), not "${arn}"${
        arn.includes('alias/') ? ': an alias moves to the new key, so name the retired key itself' : ''}`);
    }
  }
  if (new Set(arns).size !== arns.length) throw new Error('must name each retired key once');
  return arns;
};

/** What reads what, derived from the manifest so that a new grant brings its setting along. */
const allFunctions = Object.keys(FUNCTIONS) as FunctionName[];
const functionsWhere = (test: (name: FunctionName) => boolean): FunctionName[] => allFunctions.filter(test);
const tableReaders = (table: TableName) => functionsWhere((name) => table in FUNCTIONS[name].tables);
const queueReaders = (queue: QueueName) =>
  functionsWhere((name) => (FUNCTIONS[name].sendsTo as readonly QueueName[]).includes(queue) || QUEUES[queue].consumer === name);
/** Functions behind a route that takes a bearer token (`gateway` or `bearer`). */
const tokenVerifiers = functionsWhere((name) => ROUTES.some((route) => route.fn === name && route.auth !== 'none'));
/**
 * Functions behind the webhook-trigger routes: they show trigger URLs to their owners (`url`), or
 * know the URL a sender called (the receiver, for senders that sign it: Twilio, Square, HubSpot).
 */
const webhookUrlUsers = functionsWhere((name) => ROUTES.some((route) => route.fn === name && route.tag === TAGS.triggers));
/**
 * Those that show trigger URLs: all but the receiver, which is the function behind the function URL
 * and so cannot be told it (its own URL in its environment would be a cycle in the template); it
 * knows the URL a request came to from the request (`functions/domain/webhooks/received-on.ts`).
 */
const triggerUrlShowers = webhookUrlUsers.filter((name) => name !== 'webhook');
const secretUsers = functionsWhere((name) => 'secretsKey' in FUNCTIONS[name]);
const flowRunners = functionsWhere((name) => 'runsFlows' in FUNCTIONS[name]);
const mfaSigners = functionsWhere((name) => 'signsMfaTokens' in FUNCTIONS[name]);

const wiring = { kind: 'wiring' } as const;
const local = { kind: 'local' } as const;
const context = (key: string) => ({ kind: 'context', key }) as const;

/**
 * 1 to 128 letters, marks, symbols, numbers or punctuation: no spaces, no control characters.
 * Printable ASCII but the space is all of those, and is checked first: the first test of a regular
 * expression of Unicode properties compiles its tables, about 1 ms of every token-checking
 * function's init (bench cold-start), for the name nearly every deployment keeps.
 */
const isGroupName = (value: string) => /^[!-~]{1,128}$/.test(value) || /^[\p{L}\p{M}\p{S}\p{N}\p{P}]{1,128}$/u.test(value);

/** Powertools' log levels. */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

// What each setting is for is its comment, not a field: the table is in every bundle, and a
// description string there cost every function's init bytes for text nothing read at run time.
const spec = <T>(s: SettingSpec<T>): SettingSpec<T> => s;

/** Every setting, by the name handlers read it under. */
export const SETTINGS = {
  /** The listen endpoint's connections table (deployed: `lib/constructs/listen-api.ts`); unset, nothing is pushed */
  listenConnectionsTable: spec({ env: 'LISTEN_CONNECTIONS_TABLE', source: wiring, readers: ['webhook', 'triggers'], parse: optional }),
  /** The listen endpoint's management API URL (`https://{api}.execute-api.{region}.amazonaws.com/{stage}`), where pushes are posted */
  listenCallbackUrl: spec({ env: 'LISTEN_CALLBACK_URL', source: wiring, readers: ['webhook', 'triggers'], parse: optional }),
  /** Name of the auth table (API keys) */
  authTable: spec({ env: TABLES.auth.env, source: wiring, readers: tableReaders('auth'), parse: required }),
  /** Name of the kv table */
  kvTable: spec({ env: TABLES.kv.env, source: wiring, readers: tableReaders('kv'), parse: required }),
  /** Name of the accounts table */
  accountsTable: spec({ env: TABLES.accounts.env, source: wiring, readers: tableReaders('accounts'), parse: required }),
  /** Name of the triggers table */
  triggersTable: spec({ env: TABLES.triggers.env, source: wiring, readers: tableReaders('triggers'), parse: required }),
  /** Name of the executions table */
  executionsTable: spec({ env: TABLES.executions.env, source: wiring, readers: tableReaders('executions'), parse: required }),
  /** Name of the S3 bucket that holds every object store's bytes */
  objectsBucket: spec({ env: 'OBJECTS_BUCKET', source: wiring, readers: functionsWhere((name) => 'objectsBucket' in FUNCTIONS[name]), parse: required }),
  /** Origin of presigned URLs, in the console's connect-src */
  objectsTransferOrigin: spec({ env: 'OBJECTS_TRANSFER_ORIGIN', source: wiring, readers: ['system'], parse: optional }),
  /** URL of the kvSweep queue */
  kvSweepQueueUrl: spec({ env: QUEUES.kvSweep.env, source: wiring, readers: queueReaders('kvSweep'), parse: required }),
  /** URL of the searchMaintenance queue (FIFO) */
  searchMaintenanceQueueUrl: spec({ env: QUEUES.searchMaintenance.env, source: wiring, readers: queueReaders('searchMaintenance'), parse: required }),
  /** URL of the flowEvents queue */
  flowQueueUrl: spec({ env: QUEUES.flowEvents.env, source: wiring, readers: queueReaders('flowEvents'), parse: required }),
  /** URL of the flowEvents queue's dead-letter queue, where the flow worker puts an event whose last attempt failed */
  flowDeadLetterQueueUrl: spec({ env: 'FLOW_QUEUE_DLQ_URL', source: wiring, readers: [QUEUES.flowEvents.consumer], parse: required }),
  /** ARN of the flow worker function, which the receiver invokes directly for a quiet trigger's events (unset: every event goes through the flow queue) */
  flowWorkerFunction: spec({ env: 'FLOW_WORKER_FUNCTION', source: wiring, readers: ['webhook'], parse: optional }),
  /** Lambda endpoint of a bundle run against local engines (the local stack's Invoke emulator); never deployed */
  lambdaEndpoint: spec({ env: 'AWS_ENDPOINT_URL_LAMBDA', source: local, readers: ['webhook'], parse: optional }),
  /** The deployed flows, comma-separated */
  flowNames: spec({ env: 'FLOW_NAMES', source: wiring, readers: functionsWhere((name) => 'readsFlowNames' in FUNCTIONS[name]), parse: list }),
  /** ARN of a flow's state machine less the flow name */
  flowArnPrefix: spec({ env: 'FLOW_STATE_MACHINE_ARN_PREFIX', source: wiring, readers: flowRunners, parse: required }),
  /** ARN of a flow's batch state machine less the flow name (lib/flow-batch.ts) */
  flowBatchArnPrefix: spec({ env: 'FLOW_BATCH_STATE_MACHINE_ARN_PREFIX', source: wiring, readers: [QUEUES.flowEvents.consumer], parse: optional }),
  /** Flows with a batch state machine, comma-separated */
  flowBatchNames: spec({ env: 'FLOW_BATCH_NAMES', source: wiring, readers: [QUEUES.flowEvents.consumer], parse: list }),
  // The SDK reads this variable itself; the Step Functions client must know of it too, since it
  // drops the `sync-` host prefix of StartSyncExecution for a local endpoint (clients/sfn.ts).
  /** Step Functions endpoint of a bundle run against local engines; never deployed */
  sfnEndpoint: spec({ env: 'AWS_ENDPOINT_URL_SFN', source: local, readers: flowRunners, parse: optional }),
  /** Base of trigger URLs (`<base>/<webhook_id>`), the API's own; also what URL signatures (Twilio) are checked against when there is no custom domain */
  webhookBaseUrl: spec({ env: 'WEBHOOK_BASE_URL', source: wiring, readers: webhookUrlUsers, parse: required }),
  /** The receiver's Lambda function URL (`https://<id>.lambda-url.<region>.on.aws/`), the base of trigger URLs when there is one and no custom domain: a request there is not billed by API Gateway */
  webhookFunctionUrl: spec({ env: 'WEBHOOK_FUNCTION_URL', source: wiring, readers: triggerUrlShowers, parse: optional }),
  /** The receiver's function URL with `{apiId}` in place of its id (`https://{apiId}.lambda-url.<region>.on.aws`): what a sender called through it, for URL signatures (Twilio), made from the event's `apiId` as AWS routed it */
  webhookFunctionUrlPattern: spec({ env: 'WEBHOOK_FUNCTION_URL_PATTERN', source: wiring, readers: ['webhook'], parse: optional }),
  /** Base of trigger URLs behind a custom domain; also what URL signatures (Twilio) are checked against */
  publicWebhookBaseUrl: spec({ env: 'PUBLIC_WEBHOOK_BASE_URL', source: context('publicWebhookBaseUrl'), readers: webhookUrlUsers, parse: optional }),
  /** KMS key that seals secrets at rest (deployed) */
  secretsKmsKeyId: spec({ env: 'SECRETS_KMS_KEY_ID', source: wiring, readers: secretUsers, parse: optional }),
  /** KMS key (ECC_NIST_P256, SIGN_VERIFY) that signs step-up proofs (deployed) */
  mfaSigningKeyId: spec({ env: 'MFA_SIGNING_KEY_ID', source: wiring, readers: mfaSigners, parse: optional }),
  /** Earlier MFA signing keys, comma-separated: still listed in the JWKS (keep each at least 10 minutes after its rotation), never used to sign */
  mfaRetiredSigningKeyIds: spec({
    env: 'MFA_RETIRED_SIGNING_KEY_IDS',
    source: context('mfaRetiredSigningKeyIds'), readers: mfaSigners, parse: kmsKeyArns,
  }),
  /** P-256 keys (PKCS #8 DER, base64, comma-separated; the first signs) of step-up proofs on the local stack */
  localMfaSigningKeys: spec({ env: 'LOCAL_MFA_SIGNING_KEYS', source: local, readers: mfaSigners, parse: list }),
  /** The `iss` of step-up proofs: the API's (public) base URL */
  mfaTokenIssuer: spec({ env: 'MFA_TOKEN_ISSUER', source: wiring, readers: mfaSigners, parse: required }),
  /** 32-byte base64 key that seals secrets at rest on the local stack */
  localSecretsKey: spec({ env: 'LOCAL_SECRETS_KEY', source: local, readers: secretUsers, parse: optional }),
  /** HS256 secret bearer tokens are verified with (local stack) */
  authJwtSecret: spec({ env: 'AUTH_JWT_SECRET', source: local, readers: tokenVerifiers, parse: optional }),
  /** JWKS of the token issuer (the Cognito pool, or authJwksUrl) */
  authJwksUrl: spec({ env: 'AUTH_JWKS_URL', source: wiring, readers: tokenVerifiers, parse: optional }),
  /** Required `iss` of bearer tokens */
  authIssuer: spec({ env: 'AUTH_ISSUER', source: wiring, readers: tokenVerifiers, parse: optional }),
  /** Required `aud` of bearer tokens */
  authAudience: spec({ env: 'AUTH_AUDIENCE', source: wiring, readers: tokenVerifiers, parse: optional }),
  /** Accepted JWT algorithms (default HS256 with a secret, else RS256) */
  authJwtAlgorithms: spec({ env: 'AUTH_JWT_ALGORITHMS', source: wiring, readers: tokenVerifiers, parse: optional }),
  /** Group (in a token's `cognito:groups` or `groups` claim) whose users are administrators: they may mint admin API keys and reset a user's factors, each with a fresh step-up proof (default flowgate-admins; with the Cognito pool the stack creates it) */
  adminGroup: spec({
    env: 'ADMIN_GROUP',
    source: context('adminGroup'), readers: tokenVerifiers,
    parse: text('flowgate-admins', (value) => (isGroupName(value) ? undefined : 'must be a group name of 1 to 128 characters without spaces')),
  }),
  /** Larger webhook bodies get 413 (default `DEFAULT_WEBHOOK_MAX_BODY_BYTES`; at most `MAX_WEBHOOK_BODY_BYTES`, what always fits Lambda's 6 MB invocation) */
  webhookMaxBodyBytes: spec({
    env: 'WEBHOOK_MAX_BODY_BYTES',
    source: context('webhookMaxBodyBytes'), readers: ['webhook'], parse: wholeNumber(DEFAULT_WEBHOOK_MAX_BODY_BYTES, 1, MAX_WEBHOOK_BODY_BYTES),
  }),
  /** How long a wait-mode delivery waits for its flow (default 25000; at most `MAX_WAIT_TIMEOUT_MS`: API Gateway gives up 30 s after the request arrived) */
  waitTimeoutMs: spec({
    env: 'WAIT_TIMEOUT_MS',
    // The triggers function shows it with each flow (`GET /flows/{name}`), so the console can warn of a sender that gives up sooner.
    source: context('waitTimeoutMs'), readers: ['webhook', 'triggers'], parse: wholeNumber(25_000, 1, MAX_WAIT_TIMEOUT_MS),
  }),
  /** How long the receiver may accept a request on a cached copy of its trigger (default 5000; at most 60000, so a revocation takes effect within a minute) */
  triggerCacheTtlMs: spec({
    env: 'TRIGGER_CACHE_TTL_MS',
    source: context('triggerCacheTtlMs'), readers: ['webhook'], parse: wholeNumber(5_000, 0, 60_000),
  }),
  /** Issuer shown in authenticator apps (default Flowgate; no ":", at most 100 characters) */
  totpIssuer: spec({
    env: 'TOTP_ISSUER',
    source: context('totpIssuer'), readers: ['accounts'],
    // Authenticator apps show it as the issuer of `Issuer:account`, so a colon would split it.
    parse: text('Flowgate', (value) => (value.includes(':') || value.length > 100 ? 'must be text of at most 100 characters without ":"' : undefined)),
  }),
  /** Delay before a failed acknowledged run is retried, doubling each time (default `DEFAULT_RETRY_BASE_SECONDS`) */
  flowRetryBaseSeconds: spec({
    env: 'FLOW_RETRY_BASE_SECONDS',
    source: context('flowRetryBaseSeconds'), readers: [QUEUES.flowEvents.consumer], parse: wholeNumber(DEFAULT_RETRY_BASE_SECONDS, 0, MAX_RETRY_DELAY_SECONDS),
  }),
  /** How long after a purge the sweeper makes its final pass (local only; deployed it follows the kv, objects and streams functions' timeouts and upload URLs' expiry) */
  kvSweepSettleSeconds: spec({
    env: 'KV_SWEEP_SETTLE_SECONDS',
    source: local, readers: ['kv', 'objects', 'streams'], parse: (raw) => (isUnset(raw) ? undefined : wholeNumber(0, 0, 12 * 3600)(raw)),
  }),
  /** Expiry passes fall on multiples of this (local only; deployed 300) */
  objectExpirySweepSeconds: spec({
    env: 'OBJECT_EXPIRY_SWEEP_SECONDS',
    source: local, readers: ['objects', 'kvSweeper'], parse: (raw) => (isUnset(raw) ? undefined : wholeNumber(0, 1, 3600)(raw)),
  }),
  /** How long a sequence whose publisher died stops the watermark before it is skipped (local only; deployed it follows the streams function's timeout) */
  streamsLeaseSeconds: spec({
    env: 'STREAMS_LEASE_SECONDS',
    source: local, readers: ['streams'], parse: (raw) => (isUnset(raw) ? undefined : wholeNumber(0, 2, 3600)(raw)),
  }),
  /** Where search indexes live: a directory (local), or `s3+ddb://<bucket>/<prefix>?ddbTableName=<commit table>` (deployed) */
  searchDataUri: spec({ env: 'SEARCH_DATA_URI', source: wiring, readers: ['search', 'searchMaintenance'], parse: required }),
  /** Seconds a search function may answer from a table version before checking for newer commits (default 0 locally, where one process writes; deployed 1) */
  searchReadConsistencySeconds: spec({
    env: 'SEARCH_READ_CONSISTENCY_SECONDS',
    source: context('searchReadConsistencySeconds'), readers: ['search', 'searchMaintenance'], parse: wholeNumber(0, 0, 60),
  }),
  /** Origin of the Cognito hosted UI the console signs in with (https://<prefix>.auth.<region>.amazoncognito.com); unset with an external issuer */
  consoleCognitoDomain: spec({
    env: 'CONSOLE_COGNITO_DOMAIN',
    source: wiring, readers: ['system'],
    // It goes into the console's Content-Security-Policy as is: an origin, nothing that could widen it.
    // Plain http only on this machine, where the browser tests run a stand-in authorization server.
    parse: (raw) => {
      if (isUnset(raw)) return undefined;
      if (!/^(?:https:\/\/[A-Za-z0-9.-]+|http:\/\/(?:127\.0\.0\.1|localhost))(?::\d{1,5})?$/.test(raw)) {
        throw new Error(`must be an https origin without a path (http only for 127.0.0.1 or localhost), not "${raw}"`);
      }
      return raw;
    },
  }),
  /** App client the console signs in with through the hosted UI */
  consoleCognitoClientId: spec({ env: 'CONSOLE_COGNITO_CLIENT_ID', source: wiring, readers: ['system'], parse: optional }),
  /** Level of the structured logger (default INFO; one of LOG_LEVELS) */
  logLevel: spec({
    env: 'POWERTOOLS_LOG_LEVEL',
    source: context('logLevel'), readers: allFunctions,
    parse: (raw) => {
      const level = (isUnset(raw) ? 'INFO' : raw.toUpperCase()) as LogLevel;
      if (!LOG_LEVELS.includes(level)) throw new Error(`must be one of ${LOG_LEVELS.join(', ')}, not "${raw}"`);
      return level;
    },
  }),
} as const;

export type SettingName = keyof typeof SETTINGS;
/** Every setting's value, as a function that reads it sees it. */
export type Settings = { [K in SettingName]: ReturnType<(typeof SETTINGS)[K]['parse']> };

const entries = Object.entries(SETTINGS) as [SettingName, SettingSpec<unknown>][];

/** The settings a function receives. */
export const settingsReadBy = (fn: FunctionName): SettingName[] =>
  entries.filter(([, setting]) => setting.readers.includes(fn)).map(([name]) => name);

/**
 * Parses, once, every setting `fn` receives from `source` (an environment: `process.env` in
 * Lambda, the local stack's config object locally). A missing or malformed value throws a
 * {@link SettingsError} naming the variable. Reading a setting the function does not receive
 * throws too: the table, not the code, says who gets what.
 */
export function readSettings(fn: FunctionName, source: Readonly<Record<string, string | undefined>>): Settings {
  const values: Partial<Record<SettingName, unknown>> = {};
  for (const name of settingsReadBy(fn)) {
    const setting = SETTINGS[name] as SettingSpec<unknown>;
    try {
      values[name] = setting.parse(source[setting.env]);
    } catch (error) {
      throw new SettingsError(setting.env, (error as Error).message);
    }
  }
  return new Proxy(values, {
    get(target, name) {
      if (typeof name === 'string' && name in SETTINGS && !(name in target)) {
        throw new SettingsError(SETTINGS[name as SettingName].env, `is not given to the ${fn} function`);
      }
      return Reflect.get(target, name);
    },
  }) as Settings;
}

/** Checks one setting's text as a handler would read it; the error names the variable. */
export function parseSetting<K extends SettingName>(name: K, raw: string | undefined): Settings[K] {
  try {
    return SETTINGS[name].parse(raw) as Settings[K];
  } catch (error) {
    throw new SettingsError(SETTINGS[name].env, (error as Error).message);
  }
}
