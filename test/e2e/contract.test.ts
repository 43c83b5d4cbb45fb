/**
 * The contract test: it walks the OpenAPI document itself (`GET /openapi.json` as built) and calls
 * every operation on one local stack. For each operation it builds the state the operation needs,
 * sends a valid request (its JSON body checked against the documented request schema first), and
 * requires the documented success status with a body the documented schema accepts (ajv, JSON
 * Schema 2020-12, the named schemas resolved through `components`); then it sends one invalid
 * request and requires a 4xx the operation documents, in the `ClientError` shape (`message` required). An operation of the
 * document without a case here fails the test, and so does a case for an operation it lacks.
 */
import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../functions/manifest.js';
import { documentedPath } from '../../functions/openapi/document.js';
import { call, readResponse, useLocalStack } from '../support/local-stack.js';
import { jsonSchemaValidator, openApiDocument as document, type JsonSchema } from '../support/openapi.js';
import { createTrigger, deliver, TEST_FLOWS_DIR, waitForExecutions } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR, env: { TRIGGER_CACHE_TTL_MS: '0' } });

const ACCOUNT = 'contract-account';
const ADMINS = { 'cognito:groups': ['flowgate-admins'] };
const codeAt = (secret: string, at: number) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });

type Credential = { token: string } | { apiKey: string } | Record<string, never>;
interface Request {
  /** Path parameters, put in the documented path as they are (tests use names that need no encoding). */
  params?: Record<string, string | number>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  /** Default: the owner's token. */
  as?: Credential;
}
interface Case {
  valid: () => Promise<Request>;
  /** The success status the valid request must get, where the operation documents more than one. */
  success?: string;
  /** Omitted only where the operation documents no 4xx a client can cause (listed in `NO_INVALID_REQUEST`). */
  invalid?: () => Promise<Request>;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

// State the operations need, made through the API itself.
const owner = () => stack.token('contract-owner', { accountId: ACCOUNT });
const noCredentials: Credential = {};

async function send(method: string, path: string, request: Request) {
  let url = path.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => {
    const value = request.params?.[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return String(value);
  });
  if (request.query) url += `?${new URLSearchParams(request.query)}`;
  const as = request.as ?? { token: await owner() };
  return call(stack, method.toUpperCase(), url, { ...as, headers: request.headers, body: request.body, rawBody: request.rawBody });
}

/** Calls an operation by its id with a request (for building state), requiring a 2xx. */
async function made(operationId: string, request: Request) {
  const { method, path } = operations.find((o) => o.operationId === operationId)!;
  const res = await send(method, path, request);
  if (res.status >= 300) throw new Error(`${operationId} answered ${res.status}: ${res.text}`);
  return res.json?.data;
}

async function bucket(withKey = true) {
  const name = unique('b');
  await made('createKVBucket', { params: { bucket: name } });
  if (withKey) await made('putKVValueByKey', { params: { bucket: name }, query: { key: 'k1' }, rawBody: 'v1', headers: { 'content-type': 'text/plain' } });
  return name;
}
async function store(withObject = true) {
  const name = unique('s');
  await made('createObjectStore', { params: { store: name } });
  if (withObject) await made('putObjectByKey', { params: { store: name }, query: { key: 'o1' }, rawBody: 'bytes', headers: { 'content-type': 'text/plain' } });
  return name;
}
async function upload(storeName: string, sent: boolean) {
  const created = await made('createObjectUpload', { params: { store: storeName }, body: { key: unique('u'), size: 5, content_type: 'text/plain' } });
  if (sent) {
    const res = await fetch(created.url, { method: 'PUT', headers: created.headers, body: 'hello' });
    if (!res.ok) throw new Error(`upload PUT answered ${res.status}: ${await res.text()}`);
  }
  return created.id as string;
}
async function stream(withConsumer = true) {
  const name = unique('st');
  await made('createStream', { params: { stream: name } });
  await made('publishMessages', { params: { stream: name }, body: { messages: [{ data: { n: 1 } }, { data: { n: 2 } }] } });
  if (withConsumer) await made('createConsumer', { params: { stream: name, consumer: 'c1' } });
  return name;
}
const SEARCH_SETTINGS = { searchable_fields: [{ field: 'title', weight: 2 }, 'body'], filterable_fields: [{ field: 'genre', type: 'string' }], sortable_fields: [{ field: 'year', type: 'number' }] };
async function searchIndex(withDocument = true) {
  const name = unique('ix');
  await made('putSearchIndex', { params: { index: name }, body: SEARCH_SETTINGS });
  if (withDocument) await made('upsertSearchDocuments', { params: { index: name }, body: { documents: [{ id: 'd1', title: 'Dune', body: 'desert planet', genre: 'sf', year: 1965 }] } });
  return name;
}
async function delivered(settings: Record<string, unknown> = { flow: 'echo' }) {
  const token = await owner();
  const trigger = await createTrigger(stack, token, settings);
  const res = await deliver(trigger.url, JSON.stringify({ type: 'contract.test', id: unique('evt') }));
  if (res.status !== 200) throw new Error(`the delivery answered ${res.status}: ${res.text}`);
  const [execution] = await waitForExecutions(stack, token, trigger.id, (all) => all.length > 0 && all.every((e) => e.status === 'succeeded'));
  return { trigger, executionId: execution.execution_id as string };
}

/** A user of the account with a confirmed TOTP factor (enrolled with the previous step's code, so the current one verifies). */
async function enrolled(claims?: Record<string, unknown>) {
  const sub = unique('mfa');
  const token = await stack.token(sub, { accountId: ACCOUNT, ...(claims && { claims }) });
  const { secret } = (await call(stack, 'POST', '/accounts/totp-registration', { token })).json.data;
  const confirmed = await call(stack, 'POST', '/accounts/confirm-totp-registration', { token, body: { code: codeAt(secret, Date.now() - 30_000), secret } });
  if (confirmed.status !== 200) throw new Error(`enrolment answered ${confirmed.status}: ${confirmed.text}`);
  const factors = (await call(stack, 'GET', '/accounts/factors', { token })).json.data.factors;
  return { sub, token, secret: secret as string, recoveryCodes: confirmed.json.data.recovery_codes as string[], factorId: factors[0].id as string };
}
/** A step-up proof of `user` for `purpose`, from one of its recovery codes. */
async function proof(user: { token: string; recoveryCodes: string[] }, purpose: string) {
  const res = await call(stack, 'POST', '/accounts/recovery-codes/verify', { token: user.token, body: { code: user.recoveryCodes.pop(), purpose } });
  if (res.status !== 200) throw new Error(`recovery answered ${res.status}: ${res.text}`);
  return res.json.data.mfa_token as string;
}

const text = { 'content-type': 'text/plain' };

/** Every operation of the document, with what it needs. */
const CASES: Record<string, Case> = {
  // System
  getHealth: { valid: async () => ({ as: noCredentials }) },
  getOpenApi: { valid: async () => ({ as: noCredentials }) },
  getConsole: { valid: async () => ({ as: noCredentials }) },
  getConsoleAsset: {
    valid: async () => {
      const page = await call(stack, 'GET', '/console');
      const asset = /\/console\/([\w.-]+\.js)/.exec(page.text)![1]!;
      return { params: { asset }, as: noCredentials };
    },
    invalid: async () => ({ params: { asset: 'missing.js' }, as: noCredentials }),
  },
  getApiReference: { valid: async () => ({ as: noCredentials }) },
  getApiReferenceAsset: {
    valid: async () => {
      const page = await call(stack, 'GET', '/docs');
      const asset = /\/docs\/(start\.[\w-]+\.js)/.exec(page.text)![1]!;
      return { params: { asset }, as: noCredentials };
    },
    invalid: async () => ({ params: { asset: 'missing.js' }, as: noCredentials }),
  },

  // API keys
  createApiKey: { valid: async () => ({ body: { scopes: ['storage'] } }), invalid: async () => ({ body: { scopes: ['nope'] } }) },
  listApiKeys: { valid: async () => ({}), invalid: async () => ({ query: { limit: '0' } }) },
  revokeApiKey: {
    valid: async () => ({ params: { id: (await made('createApiKey', { body: {} })).id } }),
    invalid: async () => ({ params: { id: 'AAAAAAAAAAAAAAAAAAAAAA' } }),
  },
  listApiKeyEvents: { valid: async () => ({}), invalid: async () => ({ query: { limit: '1000' } }) },
  createAdminApiKey: {
    valid: async () => {
      const admin = await enrolled(ADMINS);
      return { as: { token: admin.token }, headers: { 'x-mfa-token': await proof(admin, 'mint_admin_key') } };
    },
    invalid: async () => ({ as: { token: (await enrolled(ADMINS)).token } }),
  },

  // KV
  listKVBuckets: { valid: async () => ({}), invalid: async () => ({ query: { limit: '0' } }) },
  createKVBucket: { success: '201', valid: async () => ({ params: { bucket: unique('b') }, body: { description: 'contract' } }), invalid: async () => ({ params: { bucket: unique('b') }, body: { unknown: 1 } }) },
  getKVBucket: { valid: async () => ({ params: { bucket: await bucket(false) } }), invalid: async () => ({ params: { bucket: unique('missing') } }) },
  deleteKVBucket: { valid: async () => ({ params: { bucket: await bucket(false) } }), invalid: async () => ({ params: { bucket: unique('missing') } }) },
  purgeKVBucket: { valid: async () => ({ params: { bucket: await bucket() } }), invalid: async () => ({ params: { bucket: unique('missing') } }) },
  listKVKeys: { valid: async () => ({ params: { bucket: await bucket() } }), invalid: async () => ({ params: { bucket: await bucket() }, query: { limit: '0' } }) },
  putKVValueByKey: { valid: async () => ({ params: { bucket: await bucket(false) }, query: { key: 'a/b?c' }, rawBody: 'v', headers: text }), invalid: async () => ({ params: { bucket: await bucket(false) }, rawBody: 'v', headers: text }) },
  getKVValueByKey: { valid: async () => ({ params: { bucket: await bucket() }, query: { key: 'k1' } }), invalid: async () => ({ params: { bucket: await bucket() }, query: { key: 'missing' } }) },
  deleteKVValueByKey: { valid: async () => ({ params: { bucket: await bucket() }, query: { key: 'k1' } }), invalid: async () => ({ params: { bucket: await bucket() }, query: { key: 'missing' } }) },
  putKVValue: { valid: async () => ({ params: { bucket: await bucket(false), key: 'k2' }, rawBody: 'v', headers: text }), invalid: async () => ({ params: { bucket: unique('missing'), key: 'k2' }, rawBody: 'v', headers: text }) },
  getKVValue: { valid: async () => ({ params: { bucket: await bucket(), key: 'k1' } }), invalid: async () => ({ params: { bucket: await bucket(), key: 'missing' } }) },
  deleteKVValue: { valid: async () => ({ params: { bucket: await bucket(), key: 'k1' } }), invalid: async () => ({ params: { bucket: await bucket(), key: 'missing' } }) },

  // Object stores
  listObjectStores: { valid: async () => ({}), invalid: async () => ({ query: { limit: '0' } }) },
  createObjectStore: { valid: async () => ({ params: { store: unique('s') }, body: { max_bytes: 1_000_000 } }), invalid: async () => ({ params: { store: unique('s') }, body: { unknown: 1 } }) },
  getObjectStore: { valid: async () => ({ params: { store: await store(false) } }), invalid: async () => ({ params: { store: unique('missing') } }) },
  deleteObjectStore: { valid: async () => ({ params: { store: await store() } }), invalid: async () => ({ params: { store: unique('missing') } }) },
  purgeObjectStore: { valid: async () => ({ params: { store: await store() } }), invalid: async () => ({ params: { store: unique('missing') } }) },
  listObjects: { valid: async () => ({ params: { store: await store() } }), invalid: async () => ({ params: { store: await store(false) }, query: { delimiter: '//' } }) },
  putObjectByKey: { valid: async () => ({ params: { store: await store(false) }, query: { key: 'a/b?c' }, rawBody: 'bytes', headers: text }), invalid: async () => ({ params: { store: unique('missing') }, query: { key: 'o1' }, rawBody: 'bytes', headers: text }) },
  getObjectByKey: { success: '200', valid: async () => ({ params: { store: await store() }, query: { key: 'o1' } }), invalid: async () => ({ params: { store: await store() }, query: { key: 'missing' } }) },
  headObjectByKey: { valid: async () => ({ params: { store: await store() }, query: { key: 'o1' } }), invalid: async () => ({ params: { store: await store() }, query: { key: 'missing' } }) },
  deleteObjectByKey: { valid: async () => ({ params: { store: await store() }, query: { key: 'o1' } }), invalid: async () => ({ params: { store: await store() }, query: { key: 'missing' } }) },
  createObjectUrlByKey: { valid: async () => ({ params: { store: await store() }, query: { key: 'o1' }, body: { expires_in: 60 } }), invalid: async () => ({ params: { store: await store() }, query: { key: 'o1' }, body: { expires_in: 0 } }) },
  putObject: { valid: async () => ({ params: { store: await store(false), key: 'o2' }, rawBody: 'bytes', headers: text }), invalid: async () => ({ params: { store: unique('missing'), key: 'o2' }, rawBody: 'bytes', headers: text }) },
  getObject: { success: '200', valid: async () => ({ params: { store: await store(), key: 'o1' } }), invalid: async () => ({ params: { store: await store(), key: 'missing' } }) },
  headObject: { valid: async () => ({ params: { store: await store(), key: 'o1' } }), invalid: async () => ({ params: { store: await store(), key: 'missing' } }) },
  deleteObject: { valid: async () => ({ params: { store: await store(), key: 'o1' } }), invalid: async () => ({ params: { store: await store(), key: 'missing' } }) },
  createObjectUrl: { valid: async () => ({ params: { store: await store(), key: 'o1' }, body: { expires_in: 60 } }), invalid: async () => ({ params: { store: await store(), key: 'o1' }, body: { expires_in: 0 } }) },
  createObjectUpload: { valid: async () => ({ params: { store: await store(false) }, body: { key: 'big', size: 5, content_type: 'text/plain' } }), invalid: async () => ({ params: { store: await store(false) }, body: { key: 'big' } }) },
  completeObjectUpload: {
    valid: async () => { const s = await store(false); return { params: { store: s, id: await upload(s, true) }, body: {} }; },
    invalid: async () => ({ params: { store: await store(false), id: '0'.repeat(32) }, body: {} }),
  },
  refreshObjectUploadUrls: {
    valid: async () => { const s = await store(false); return { params: { store: s, id: await upload(s, false) }, body: {} }; },
    invalid: async () => ({ params: { store: await store(false), id: '0'.repeat(32) }, body: {} }),
  },
  abortObjectUpload: {
    valid: async () => { const s = await store(false); return { params: { store: s, id: await upload(s, false) } }; },
    invalid: async () => ({ params: { store: await store(false), id: '0'.repeat(32) } }),
  },

  // Search indexes
  listSearchIndexes: { valid: async () => ({}), invalid: async () => ({ query: { limit: '0' } }) },
  putSearchIndex: { success: '201', valid: async () => ({ params: { index: unique('ix') }, body: SEARCH_SETTINGS }), invalid: async () => ({ params: { index: unique('ix') }, body: { searchable_fields: [] } }) },
  getSearchIndex: { valid: async () => ({ params: { index: await searchIndex() } }), invalid: async () => ({ params: { index: unique('missing') } }) },
  deleteSearchIndex: { valid: async () => ({ params: { index: await searchIndex() } }), invalid: async () => ({ params: { index: unique('missing') } }) },
  purgeSearchIndex: { valid: async () => ({ params: { index: await searchIndex() } }), invalid: async () => ({ params: { index: unique('missing') } }) },
  upsertSearchDocuments: {
    valid: async () => ({ params: { index: await searchIndex(false) }, query: { wait: 'true' }, body: { documents: [{ id: 'd2', title: 'Foundation', year: 1951 }] } }),
    invalid: async () => ({ params: { index: await searchIndex(false) }, body: { documents: [{ id: 'd3', year: 'old' }] } }),
  },
  deleteSearchDocuments: {
    valid: async () => ({ params: { index: await searchIndex() }, body: { filter: { genre: 'sf' } } }),
    invalid: async () => ({ params: { index: await searchIndex() }, body: { filter: { year: 1965 } } }),
  },
  putSearchDocument: { valid: async () => ({ params: { index: await searchIndex(false), id: 'd9' }, body: { title: 'Hyperion' } }), invalid: async () => ({ params: { index: await searchIndex(false), id: 'd9' }, body: { id: 'other' } }) },
  getSearchDocument: { valid: async () => ({ params: { index: await searchIndex(), id: 'd1' } }), invalid: async () => ({ params: { index: await searchIndex(), id: 'missing' } }) },
  deleteSearchDocument: { valid: async () => ({ params: { index: await searchIndex(), id: 'd1' } }), invalid: async () => ({ params: { index: await searchIndex(), id: 'missing' } }) },
  querySearchIndex: {
    valid: async () => ({ params: { index: await searchIndex() }, body: { q: 'dese', filter: { genre: { in: ['sf'] } }, sort: ['year:desc'], facets: ['genre'], highlight: true, limit: 5 } }),
    invalid: async () => ({ params: { index: await searchIndex() }, body: { q: 'x', filter: { body: 'not filterable' } } }),
  },

  // Streams
  listStreams: { valid: async () => ({}), invalid: async () => ({ query: { limit: '0' } }) },
  createStream: { success: '201', valid: async () => ({ params: { stream: unique('st') }, body: { max_msgs: 100 } }), invalid: async () => ({ params: { stream: unique('st') }, body: { unknown: 1 } }) },
  getStream: { valid: async () => ({ params: { stream: await stream(false) } }), invalid: async () => ({ params: { stream: unique('missing') } }) },
  deleteStream: { valid: async () => ({ params: { stream: await stream() } }), invalid: async () => ({ params: { stream: unique('missing') } }) },
  purgeStream: { valid: async () => ({ params: { stream: await stream() } }), invalid: async () => ({ params: { stream: unique('missing') } }) },
  publishMessages: {
    valid: async () => ({ params: { stream: await stream(false) }, body: { messages: [{ data: { hello: 'world' }, msg_id: 'm1', headers: { k: 'v' } }] } }),
    invalid: async () => ({ params: { stream: await stream(false) }, body: { messages: 'not a list' } }),
  },
  readMessages: { valid: async () => ({ params: { stream: await stream(false) } }), invalid: async () => ({ params: { stream: await stream(false) }, query: { limit: '0' } }) },
  getMessage: { valid: async () => ({ params: { stream: await stream(false), seq: 1 } }), invalid: async () => ({ params: { stream: await stream(false), seq: 99 } }) },
  listConsumers: { valid: async () => ({ params: { stream: await stream() } }), invalid: async () => ({ params: { stream: unique('missing') } }) },
  createConsumer: { valid: async () => ({ params: { stream: await stream(false), consumer: 'c2' }, body: { ack_wait_seconds: 30 } }), invalid: async () => ({ params: { stream: await stream(false), consumer: 'c2' }, body: { unknown: 1 } }) },
  getConsumer: { valid: async () => ({ params: { stream: await stream(), consumer: 'c1' } }), invalid: async () => ({ params: { stream: await stream(), consumer: 'missing' } }) },
  deleteConsumer: { valid: async () => ({ params: { stream: await stream(), consumer: 'c1' } }), invalid: async () => ({ params: { stream: await stream(), consumer: 'missing' } }) },
  fetchMessages: { valid: async () => ({ params: { stream: await stream(), consumer: 'c1' }, body: { batch: 2 } }), invalid: async () => ({ params: { stream: await stream(), consumer: 'c1' }, body: { batch: 'two' } }) },
  ackMessages: {
    valid: async () => { const s = await stream(); await made('fetchMessages', { params: { stream: s, consumer: 'c1' }, body: { batch: 2 } }); return { params: { stream: s, consumer: 'c1' }, body: { seqs: [1] } }; },
    invalid: async () => ({ params: { stream: await stream(), consumer: 'c1' }, body: { seqs: 'one' } }),
  },
  nakMessage: {
    valid: async () => { const s = await stream(); await made('fetchMessages', { params: { stream: s, consumer: 'c1' }, body: { batch: 2 } }); return { params: { stream: s, consumer: 'c1' }, body: { seq: 1 } }; },
    invalid: async () => ({ params: { stream: await stream(), consumer: 'c1' }, body: {} }),
  },
  listDeadMessages: { valid: async () => ({ params: { stream: await stream(), consumer: 'c1' } }), invalid: async () => ({ params: { stream: await stream(), consumer: 'missing' } }) },

  // MFA
  startTotpRegistration: {
    valid: async () => ({ as: { token: await stack.token(unique('new'), { accountId: ACCOUNT }) } }),
    invalid: async () => ({ as: { token: (await enrolled()).token } }),
  },
  confirmTotpRegistration: {
    valid: async () => {
      const token = await stack.token(unique('new'), { accountId: ACCOUNT });
      const { secret } = (await call(stack, 'POST', '/accounts/totp-registration', { token })).json.data;
      return { as: { token }, body: { code: codeAt(secret, Date.now()), secret, name: 'Phone' } };
    },
    invalid: async () => ({ as: { token: await stack.token(unique('new'), { accountId: ACCOUNT }) }, body: { code: '12', secret: 'AAAA' } }),
  },
  verifyRecoveryCode: {
    valid: async () => { const user = await enrolled(); return { as: { token: user.token }, body: { code: user.recoveryCodes[0] } }; },
    invalid: async () => ({ as: { token: (await enrolled()).token }, body: {} }),
  },
  verifyTotp: {
    valid: async () => { const user = await enrolled(); return { as: { token: user.token }, body: { code: codeAt(user.secret, Date.now()) } }; },
    invalid: async () => ({ as: { token: (await enrolled()).token }, body: { code: 'abc' } }),
  },
  listFactors: { valid: async () => ({ as: { token: (await enrolled()).token } }), invalid: async () => ({ as: noCredentials }) },
  removeFactor: {
    valid: async () => { const user = await enrolled(); return { as: { token: user.token }, params: { id: user.factorId }, headers: { 'x-mfa-token': await proof(user, 'remove_factor') } }; },
    invalid: async () => { const user = await enrolled(); return { as: { token: user.token }, params: { id: user.factorId } }; },
  },
  regenerateRecoveryCodes: {
    valid: async () => { const user = await enrolled(); return { as: { token: user.token }, headers: { 'x-mfa-token': await proof(user, 'regenerate_recovery_codes') } }; },
    invalid: async () => ({ as: { token: (await enrolled()).token } }),
  },
  listMfaEvents: { valid: async () => ({ as: { token: (await enrolled()).token } }), invalid: async () => ({ query: { limit: '0' } }) },
  adminListUserFactors: {
    valid: async () => ({ params: { sub: (await enrolled()).sub }, as: { token: await stack.token(unique('admin'), { accountId: ACCOUNT, claims: ADMINS }) } }),
    invalid: async () => ({ params: { sub: unique('nobody') }, as: { token: await stack.token(unique('admin'), { accountId: ACCOUNT, claims: ADMINS }) } }),
  },
  adminResetUserFactors: {
    valid: async () => {
      const admin = await enrolled(ADMINS);
      return { params: { sub: (await enrolled()).sub }, as: { token: admin.token }, headers: { 'x-mfa-token': await proof(admin, 'admin_reset') } };
    },
    invalid: async () => ({ params: { sub: (await enrolled()).sub }, as: { token: (await enrolled(ADMINS)).token } }),
  },
  getMfaJwks: { valid: async () => ({ as: noCredentials }) },

  // Webhook triggers
  createTrigger: { valid: async () => ({ body: { flow: 'echo', event_filter: ['contract.*'], api_key_enabled: true } }), invalid: async () => ({ body: {} }) },
  listTriggers: { valid: async () => ({}), invalid: async () => ({ query: { limit: '0' } }) },
  getTrigger: { valid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id } }), invalid: async () => ({ params: { id: 'AAAAAAAAAAAAAAAAAAAAAA' } }) },
  updateTrigger: { valid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id }, body: { enabled: false } }), invalid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id }, body: {} }) },
  deleteTrigger: { valid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id } }), invalid: async () => ({ params: { id: 'AAAAAAAAAAAAAAAAAAAAAA' } }) },
  regenerateTriggerUrl: { valid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id } }), invalid: async () => ({ params: { id: 'AAAAAAAAAAAAAAAAAAAAAA' } }) },
  regenerateTriggerApiKey: {
    valid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo', api_key_enabled: true })).id }, body: { previous_key_expires_in_seconds: 60 } }),
    invalid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id }, body: {} }),
  },
  rotateTriggerSigningSecret: {
    valid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo', signature: { service: 'stripe', secret: 'whsec_contract_one' } })).id }, body: { secret: 'whsec_contract_two' } }),
    invalid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo', signature: { service: 'stripe', secret: 'whsec_contract_one' } })).id }, body: {} }),
  },
  awaitTriggerHandshake: {
    valid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo', signature: { service: 'asana' } })).id } }),
    invalid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id } }),
  },
  listTriggerExecutions: { valid: async () => ({ params: { id: (await delivered()).trigger.id } }), invalid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id }, query: { status: 'nope' } }) },
  getTriggerExecution: {
    valid: async () => { const { trigger, executionId } = await delivered(); return { params: { id: trigger.id, execution_id: executionId } }; },
    invalid: async () => { const { trigger } = await delivered(); return { params: { id: trigger.id, execution_id: '0'.repeat(26) } }; },
  },
  replayTriggerExecution: {
    valid: async () => { const { trigger, executionId } = await delivered(); return { params: { id: trigger.id, execution_id: executionId } }; },
    invalid: async () => ({ params: { id: 'AAAAAAAAAAAAAAAAAAAAAA', execution_id: '0'.repeat(26) } }),
  },
  replayTriggerExecutions: {
    valid: async () => ({ params: { id: (await delivered()).trigger.id }, body: { status: ['succeeded'] } }),
    invalid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id }, body: {} }),
  },
  getTriggerStats: { valid: async () => ({ params: { id: (await delivered()).trigger.id } }), invalid: async () => ({ params: { id: (await createTrigger(stack, await owner(), { flow: 'echo' })).id }, query: { bucket: 'week' } }) },
  listTriggerStats: { valid: async () => ({}), invalid: async () => ({ query: { bucket: 'week' } }) },
  listFlows: { valid: async () => ({}), invalid: async () => ({ as: noCredentials }) },
  getFlow: { valid: async () => ({ params: { name: 'echo' } }), invalid: async () => ({ params: { name: 'no-such-flow' } }) },
  listSignatureServices: { valid: async () => ({}), invalid: async () => ({ as: noCredentials }) },
  receiveWebhook: {
    valid: async () => ({ params: { webhook_id: (await createTrigger(stack, await owner(), { flow: 'echo' })).webhook_id }, body: { type: 'contract.test' }, as: noCredentials }),
    invalid: async () => ({ params: { webhook_id: 'A'.repeat(32) }, body: {}, as: noCredentials }),
  },
};

/** Operations that document no 4xx a client can cause with a request of its own: only their valid request is sent. */
const NO_INVALID_REQUEST: Record<string, string> = {
  getHealth: 'no input and no credentials: always 200',
  getOpenApi: 'no input and no credentials: always 200',
  getConsole: 'no input and no credentials: always 200',
  getApiReference: 'no input and no credentials: always 200',
  getMfaJwks: 'no input and no credentials: always 200',
};

/** The operations of the document, as a client sees them. */
const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method, operationId: operation.operationId as string, operation })));

const ajv = jsonSchemaValidator();
ajv.addKeyword({ keyword: 'components' });
const validatorOf = (schema: JsonSchema) => ajv.compile({ components: document.components, $defs: { it: schema }, $ref: '#/$defs/it' });

function mediaSchema(content: Record<string, { schema: JsonSchema }> | undefined, contentType: string | null) {
  if (!content) return undefined;
  const type = (contentType ?? '').split(';')[0]!.trim();
  return content[type]?.schema ?? content['*/*']?.schema;
}

function expectDocumented(operation: any, res: Awaited<ReturnType<typeof readResponse>>, statuses: (status: string) => boolean, label: string) {
  const status = String(res.status);
  expect(statuses(status) && operation.responses[status] !== undefined, `${label}: ${res.status} ${res.text.slice(0, 400)}`).toBe(true);
  const documented = operation.responses[status];
  const schema = mediaSchema(documented.content, res.headers.get('content-type'));
  if (documented.content && res.text !== '') expect(schema, `${label}: ${res.headers.get('content-type')} is not a documented media type`).toBeDefined();
  if (schema && res.json !== undefined && (res.headers.get('content-type') ?? '').includes('json')) {
    const validate = validatorOf(schema);
    expect(validate(res.json) ? [] : validate.errors, `${label}: the body breaks the documented schema`).toEqual([]);
  }
}

/** The success status an operation's valid request must get: its one documented 2xx, or the one its case names. */
function successOf(operation: any, testCase: Case): string {
  const documented = Object.keys(operation.responses).filter((status) => /^2/.test(status));
  if (testCase.success) return testCase.success;
  expect(documented, `${operation.operationId} documents several successes: its case must say which one it expects`).toHaveLength(1);
  return documented[0]!;
}

describe('the contract: every operation of the document answers as documented', () => {
  it('has a case for every operation of the document and none for an operation it lacks', () => {
    expect(Object.keys(CASES).sort()).toEqual(operations.map((o) => o.operationId).sort());
    for (const id of Object.keys(NO_INVALID_REQUEST)) expect(CASES[id]?.invalid, id).toBeUndefined();
    expect(Object.keys(CASES).filter((id) => !CASES[id]!.invalid).sort()).toEqual(Object.keys(NO_INVALID_REQUEST).sort());
    expect(Object.keys(NO_INVALID_REQUEST).length).toBeLessThanOrEqual(5);
  });

  it('no route is left out of the document, and the document names no route the route table does not serve', () => {
    const routes = ROUTES.map((r) => `${r.method === 'ANY' ? 'post' : r.method.toLowerCase()} ${documentedPath(r)} ${r.operationId}`).sort();
    expect(operations.map((o) => `${o.method} ${o.path} ${o.operationId}`).sort()).toEqual(routes);
  });

  it.each(operations.map((o) => [`${o.method.toUpperCase()} ${o.path} (${o.operationId})`, o] as const))('%s', async (_label, { path, method, operationId, operation }) => {
    const testCase = CASES[operationId]!;
    const valid = await testCase.valid();
    const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
    if (valid.body !== undefined && bodySchema) {
      const validate = validatorOf(bodySchema);
      expect(validate(valid.body) ? [] : validate.errors, `${operationId}: the valid request's body breaks the documented request schema`).toEqual([]);
    }
    const answered = await send(method, path, valid);
    const success = successOf(operation, testCase);
    expectDocumented(operation, answered, (status) => status === success, `${operationId} (valid)`);
    // The headers documented on the success (ETag, Location, …) are sent; `x-meta-*` stands for a family of names.
    for (const name of Object.keys(operation.responses[success].headers ?? {}).filter((n) => !n.includes('*'))) {
      expect(answered.headers.has(name), `${operationId} (valid): documented header ${name} missing`).toBe(true);
    }

    if (!testCase.invalid) return;
    const refused = await send(method, path, await testCase.invalid());
    expectDocumented(operation, refused, (status) => /^4/.test(status), `${operationId} (invalid)`);
    if (method === 'head') return; // an answer to HEAD has no body (RFC 9110 9.3.2), its status is what a client gets
    const validateError = validatorOf({ $ref: '#/components/schemas/ClientError' });
    expect(validateError(refused.json) ? [] : validateError.errors, `${operationId} (invalid): not the ClientError shape (a 4xx without its message?)`).toEqual([]);
    // The status's description names the codes it carries (`validation_error: …`).
    expect(operation.responses[String(refused.status)].description, `${operationId} (invalid): ${refused.status} ${refused.json.error} is not among the codes documented for it`).toContain(refused.json.error);
  });
});
