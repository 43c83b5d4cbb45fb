/**
 * A corpus of hostile requests against every route of the local stack. Each one must be refused
 * with a 4xx and the `{"error": "<code>", "message": "<what to fix>"}` body, never a 5xx; afterwards the stack still answers,
 * no trigger has run a flow, and the stored data (a seeded bucket, triggers, API keys) is as it was.
 *
 * The corpus is a table (`CASES`): add a row to add a case. Requests go out one at a time through
 * `node:http` (which, unlike fetch, neither normalises `..` in paths nor merges repeated headers) or,
 * for what no HTTP client will send, as raw bytes over a socket.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, type RouteSpec } from '../../functions/manifest.js';
import { mintLocalToken } from '../../local/token.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { signCustom, signGithub, signShopify, signSlack, signStandardWebhooks, signStripe, signTwilio } from '../support/signers.js';
import { createTrigger, TEST_FLOWS_DIR } from '../support/webhooks.js';

const stack = useLocalStack({ flowsDir: TEST_FLOWS_DIR });

// ---------------------------------------------------------------------------------------------
// Fixtures: two accounts, a seeded bucket, one trigger per way of protecting it.

const OWNER = 'hostile-owner';
const OTHER = 'hostile-other';
const SEEDED = 'seeded';
/** A bucket name no case may bring into existence. */
const FRESH = 'fresh';
const SEEDED_MAX_VALUE_BYTES = 1024;
const SEEDED_VALUES: Record<string, { body: Uint8Array; type: string }> = {
  a: { body: Buffer.from('alpha'), type: 'text/plain' },
  'dir/b': { body: Buffer.from('{"b":true}'), type: 'application/json' },
  bin: { body: Buffer.from([0, 255, 254, 1, 128]), type: 'application/octet-stream' },
  'ünï/çødé': { body: Buffer.from('unicode'), type: 'text/plain; charset=utf-8' },
};
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

const SECRETS = {
  stripe: 'whsec_hostile_stripe',
  github: 'hostile-github',
  slack: 'hostile-slack',
  shopify: 'shpss_hostile',
  twilio: 'hostile-twilio-token',
  standard_webhooks: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  custom: 'hostile-custom',
} as const;
const CUSTOM = { algorithm: 'sha256', header: 'x-signature', encoding: 'hex', prefix: 'v1=', timestamp_header: 'x-timestamp' } as const;

const TRIGGER_SETTINGS = {
  open: { flow: 'echo' },
  keyed: { flow: 'echo', api_key_enabled: true },
  stripe: { flow: 'echo', signature: { service: 'stripe', secret: SECRETS.stripe } },
  github: { flow: 'echo', signature: { service: 'github', secret: SECRETS.github } },
  slack: { flow: 'echo', signature: { service: 'slack', secret: SECRETS.slack } },
  shopify: { flow: 'echo', signature: { service: 'shopify', secret: SECRETS.shopify } },
  twilio: { flow: 'echo', signature: { service: 'twilio', secret: SECRETS.twilio } },
  standard: { flow: 'echo', signature: { service: 'standard_webhooks', secret: SECRETS.standard_webhooks } },
  custom: { flow: 'echo', signature: { service: 'custom', secret: SECRETS.custom, custom: CUSTOM } },
  keyedGithub: { flow: 'echo', api_key_enabled: true, signature: { service: 'github', secret: SECRETS.github } },
  disabled: { flow: 'echo', enabled: false },
  wait: { flow: 'fails-on-type', response_mode: 'wait', signature: { service: 'github', secret: SECRETS.github } },
} as const;
type HookName = keyof typeof TRIGGER_SETTINGS;

interface Hook {
  id: string;
  webhookId: string;
  /** Path and query of the webhook URL on the local stack. */
  path: string;
  url: string;
  apiKey?: string;
}

interface Fixture {
  owner: string;
  other: string;
  jwtSecret: string;
  apiKey: string;
  apiKeyId: string;
  otherApiKeyId: string;
  hooks: Record<HookName, Hook>;
  otherHook: Hook;
}

const fx = {} as Fixture;

// ---------------------------------------------------------------------------------------------
// Requests and responses.

type Body = string | Uint8Array;
/** Header values as `node:http` sends them: an array is one header line per value. */
type OutgoingHttpHeaders = Record<string, string | number | string[]>;
/** A request through `node:http`: a header given an array is sent once per value. */
interface HttpReq {
  method: string;
  path: string;
  headers?: OutgoingHttpHeaders;
  body?: Body;
}
/** Bytes written to a socket as they are. */
interface RawReq {
  raw: string | Buffer;
}
type Req = HttpReq | RawReq;

interface HostileCase {
  name: string;
  request: (f: Fixture) => Req | Promise<Req>;
  /** The status a correct service gives; when absent any 4xx will do. */
  status?: number;
}

interface Res {
  status: number;
  contentType: string | undefined;
  body: string;
}

const REQUEST_TIMEOUT_MS = 15_000;

function sendHttp(req: HttpReq): Promise<Res> {
  const { port } = new URL(stack.baseUrl);
  const headers: OutgoingHttpHeaders = { ...req.headers };
  const hasLength = Object.keys(headers).some((name) => name.toLowerCase() === 'content-length' || name.toLowerCase() === 'transfer-encoding');
  if (req.body !== undefined && !hasLength) headers['content-length'] = Buffer.byteLength(req.body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent: false, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error('no response in time')));
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/** Parses one HTTP/1.1 response, or `undefined` while it is incomplete (`closed`: nothing more will come). */
function parseResponse(bytes: Buffer, closed: boolean): Res | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  let rest = bytes.subarray(headEnd + 4);
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd === -1) return undefined;
      const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    rest = Buffer.concat(parts);
  } else if (headers.has('content-length')) {
    const length = Number(headers.get('content-length'));
    if (rest.length < length) return undefined;
    rest = rest.subarray(0, length);
  } else if (!closed) return undefined;
  return { status: Number(statusLine!.split(' ')[1]), contentType: headers.get('content-type'), body: rest.toString('utf8') };
}

function sendRaw(req: RawReq): Promise<Res> {
  const { port } = new URL(stack.baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // No half-close: Node's server drops a connection whose client ended its side before the answer.
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(req.raw));
    const settle = (closed: boolean) => {
      const res = parseResponse(Buffer.concat(chunks), closed);
      if (res) {
        socket.destroy();
        resolve(res);
      } else if (closed) reject(new Error(`connection closed without a complete response: ${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}`));
    };
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy(new Error('no response in time')));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      settle(false);
    });
    socket.on('close', () => settle(true));
    socket.on('error', reject);
  });
}

const send = async (req: Req): Promise<Res> => ('raw' in req ? sendRaw(req) : sendHttp(req));

/** The one acceptable shape of a refusal. */
function expectRefusal(res: Res, status?: number, method?: string): void {
  const summary = `${res.status} ${res.contentType} ${res.body.slice(0, 200)}`;
  expect(res.status, summary).toBeGreaterThanOrEqual(400);
  expect(res.status, summary).toBeLessThan(500);
  if (status !== undefined) expect(res.status, summary).toBe(status);
  // An answer to HEAD has no body (RFC 9110 9.3.2): its status and headers are the refusal.
  if (method === 'HEAD') return;
  expect(res.contentType, summary).toMatch(/^application\/json\b/);
  const body: unknown = JSON.parse(res.body);
  // Every 4xx says what to fix: a call site that throws a bare code fails here.
  expect(body, summary).toEqual({ error: expect.stringMatching(/^[a-z_]+$/), message: expect.stringMatching(/\S/) });
}

// ---------------------------------------------------------------------------------------------
// Building blocks of hostile input.

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);
const inOneHour = () => nowSeconds() + 3600;

/** A JWS signed with HMAC-SHA256 under whatever header it is given (so `alg` can lie). */
function jws(header: Record<string, unknown>, payload: Record<string, unknown>, secret: string): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** A token signed with the stack's own secret carrying the given claims: valid but for them. */
const signedClaims = (f: Fixture, claims: Record<string, unknown>) => bearer(jws({ alg: 'HS256', typ: 'JWT' }, { exp: inOneHour(), ...claims }, f.jwtSecret));

const deepArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deepObjects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const INVALID_UTF8 = Buffer.concat([Buffer.from('{"flow":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')]);
/** API Gateway's (and the local stack's) payload limit is 10 MiB. */
const OVER_GATEWAY_LIMIT = 10 * 1024 * 1024 + 1;
/** The webhook receiver's `WEBHOOK_MAX_BODY_BYTES` default. */
const OVER_WEBHOOK_LIMIT = 1024 * 1024 + 1;
const JSON_TYPE = { 'content-type': 'application/json' };
const unknownWebhookId = () => randomBytes(24).toString('base64url');
const unknownHex = () => randomBytes(16).toString('hex');
/** A request line and headers sent verbatim; `Connection: close` so the answer ends the exchange. */
const raw = (head: string, extra = '', body = ''): RawReq => ({ raw: `${head}\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n${body}` });

// ---------------------------------------------------------------------------------------------
// The corpus.

/** Every authenticated route, with a request that would succeed (and change data) were it let in. */
const AUTHENTICATED_ROUTES = ROUTES.filter((route) => route.auth !== 'none');

function wouldSucceed(route: RouteSpec, f: Fixture): HttpReq {
  const path = route.path
    .replace('{bucket}', route.operationId === 'createKVBucket' ? FRESH : SEEDED)
    .replace('{key+}', 'a')
    .replace('{stream}', SEEDED)
    .replace('{consumer}', 'c')
    .replace('{seq}', '1')
    .replace('{name}', 'echo')
    .replace('{id}', route.fn === 'apiKeys' ? f.apiKeyId : route.operationId === 'regenerateTriggerApiKey' ? f.hooks.keyed.id : f.hooks.open.id);
  const bodies: Partial<Record<string, { body: Body; type: string }>> = {
    createKVBucket: { body: '{}', type: 'application/json' },
    publishMessages: { body: JSON.stringify({ messages: [{ data: 'x' }] }), type: 'application/json' },
    ackMessages: { body: JSON.stringify({ seqs: [1] }), type: 'application/json' },
    nakMessage: { body: JSON.stringify({ seq: 1 }), type: 'application/json' },
    putKVValue: { body: 'overwritten', type: 'text/plain' },
    confirmTotpRegistration: { body: JSON.stringify({ code: '123456', secret: TOTP_SECRET }), type: 'application/json' },
    verifyRecoveryCode: { body: JSON.stringify({ code: 'abcd-efgh-ijkl' }), type: 'application/json' },
    createTrigger: { body: JSON.stringify({ flow: 'echo' }), type: 'application/json' },
    updateTrigger: { body: JSON.stringify({ enabled: false }), type: 'application/json' },
  };
  const body = bodies[route.operationId];
  return { method: route.method, path, ...(body && { body: body.body, headers: { 'content-type': body.type } }) };
}

const CREDENTIAL_FAULTS: { name: string; headers: (f: Fixture) => OutgoingHttpHeaders | Promise<OutgoingHttpHeaders> }[] = [
  { name: 'no credentials', headers: () => ({}) },
  { name: 'a token signed with another secret', headers: async () => bearer(await mintLocalToken({ secret: 'not-the-stack-secret', sub: OWNER })) },
  { name: 'an alg:none token', headers: () => bearer(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: OWNER, exp: inOneHour() })}.`) },
  { name: 'an expired token', headers: async () => bearer(await stack.token(OWNER, { expiresInSeconds: -120 })) },
  { name: 'a bearer that is not a JWT', headers: () => ({ authorization: 'Bearer not-a-jwt' }) },
  { name: 'Basic credentials', headers: () => ({ authorization: `Basic ${Buffer.from(`${OWNER}:password`).toString('base64')}` }) },
  { name: 'an empty Authorization header', headers: () => ({ authorization: '' }) },
  { name: 'an unknown API key', headers: () => ({ 'x-api-key': `fgk_${randomBytes(32).toString('base64url')}` }) },
  { name: "a trigger's API key used as a gateway key", headers: (f) => ({ 'x-api-key': f.hooks.keyed.apiKey! }) },
  { name: 'two Authorization headers, both valid', headers: (f) => ({ authorization: [`Bearer ${f.owner}`, `Bearer ${f.owner}`] }) },
  { name: 'two X-Api-Key headers, both valid', headers: (f) => ({ 'x-api-key': [f.apiKey, f.apiKey] }) },
];

const credentialCases: HostileCase[] = AUTHENTICATED_ROUTES.flatMap((route) => [
  ...CREDENTIAL_FAULTS.map((fault): HostileCase => ({
    name: `${route.method} ${route.path} with ${fault.name}`,
    status: 401,
    request: async (f) => {
      const req = wouldSucceed(route, f);
      return { ...req, headers: { ...req.headers, ...(await fault.headers(f)) } };
    },
  })),
  ...(route.auth === 'bearer'
    ? [{
        name: `${route.method} ${route.path} (bearer only) with a valid gateway API key`,
        status: 401,
        request: (f: Fixture) => {
          const req = wouldSucceed(route, f);
          return { ...req, headers: { ...req.headers, 'x-api-key': f.apiKey } };
        },
      }]
    : []),
]);

/** Tokens that are wrong in one way each, on a route that reads the account (and one that stores by subject). */
const TOKEN_FAULTS: { name: string; headers: (f: Fixture) => OutgoingHttpHeaders | Promise<OutgoingHttpHeaders> }[] = [
  { name: 'HS512 under the right secret (algorithm not allowed)', headers: (f) => {
    const input = `${b64url({ alg: 'HS512', typ: 'JWT' })}.${b64url({ sub: OWNER, exp: inOneHour() })}`;
    return bearer(`${input}.${createHmac('sha512', f.jwtSecret).update(input).digest('base64url')}`);
  } },
  { name: 'an RS256 header over an HMAC signature (algorithm confusion)', headers: (f) => bearer(jws({ alg: 'RS256', typ: 'JWT' }, { sub: OWNER, exp: inOneHour() }, f.jwtSecret)) },
  { name: 'no exp claim', headers: (f) => bearer(jws({ alg: 'HS256' }, { sub: OWNER }, f.jwtSecret)) },
  { name: 'an unknown critical header', headers: (f) => bearer(jws({ alg: 'HS256', crit: ['x-unknown'], 'x-unknown': 1 }, { sub: OWNER, exp: inOneHour() }, f.jwtSecret)) },
  { name: 'nbf an hour ahead', headers: (f) => signedClaims(f, { sub: OWNER, nbf: inOneHour() }) },
  { name: 'exp as a string', headers: (f) => bearer(jws({ alg: 'HS256' }, { sub: OWNER, exp: 'never' }, f.jwtSecret)) },
  { name: 'a valid signature over another payload', headers: (f) => {
    const [header, , signature] = f.owner.split('.');
    return bearer(`${header}.${b64url({ sub: OTHER, exp: inOneHour() })}.${signature}`);
  } },
  { name: 'no signature part', headers: (f) => bearer(f.owner.split('.').slice(0, 2).join('.') + '.') },
  { name: 'five parts (a JWE shape)', headers: (f) => bearer(`${f.owner}.x.y`) },
  { name: 'a space inside the token', headers: (f) => ({ authorization: `Bearer ${f.owner.slice(0, 20)} ${f.owner.slice(20)}` }) },
  { name: 'two spaces after Bearer', headers: (f) => ({ authorization: `Bearer  ${f.owner}` }) },
  { name: 'a 9,000-character token', headers: (f) => signedClaims(f, { sub: OWNER, pad: 'p'.repeat(9000) }) },
  { name: 'an empty sub', headers: (f) => signedClaims(f, { sub: '' }) },
  { name: 'a numeric sub', headers: (f) => signedClaims(f, { sub: 12345 }) },
  { name: 'an object sub', headers: (f) => signedClaims(f, { sub: { length: 1 } }) },
  { name: 'an array sub', headers: (f) => signedClaims(f, { sub: ['a'] }) },
  { name: 'a huge sub (5,000 characters) with a short account_id', headers: (f) => signedClaims(f, { sub: 's'.repeat(5000), account_id: 'acct-short' }) },
  { name: 'a huge sub (5,000 characters) alone', headers: (f) => signedClaims(f, { sub: 's'.repeat(5000) }) },
  { name: 'a huge account_id (5,000 characters)', headers: (f) => signedClaims(f, { sub: OWNER, account_id: 'a'.repeat(5000) }) },
  { name: 'a sub with a lone surrogate', headers: (f) => signedClaims(f, { sub: 'user\ud800' }) },
  { name: 'an account_id with a lone surrogate', headers: (f) => signedClaims(f, { sub: OWNER, account_id: '\udc00' }) },
  { name: 'a sub with a NUL', headers: (f) => signedClaims(f, { sub: 'user\u0000x' }) },
];
const TOKEN_ROUTES = [
  { method: 'GET', path: '/api-keys' },
  { method: 'POST', path: '/accounts/totp-registration' },
];
const tokenCases: HostileCase[] = TOKEN_ROUTES.flatMap((route) =>
  TOKEN_FAULTS.map((fault): HostileCase => ({
    name: `${route.method} ${route.path} with a token with ${fault.name}`,
    status: 401,
    request: async (f) => ({ ...route, headers: await fault.headers(f) }),
  })));

/** Bodies every JSON route must refuse, whatever it expects. */
const BODY_FAULTS: { name: string; body: () => Body; headers?: OutgoingHttpHeaders; status: number; skip?: string[]; statusFor?: Record<string, number> }[] = [
  { name: 'truncated JSON', body: () => '{"flow": "ec', headers: JSON_TYPE, status: 400 },
  { name: 'JSON with a trailing comma', body: () => '{"flow": "echo",}', headers: JSON_TYPE, status: 400 },
  { name: 'single-quoted JSON', body: () => "{'flow': 'echo'}", headers: JSON_TYPE, status: 400 },
  { name: 'a form body labelled JSON', body: () => 'flow=echo&code=123456', headers: JSON_TYPE, status: 400 },
  { name: 'an empty body labelled JSON', body: () => '', headers: JSON_TYPE, status: 400, skip: ['createKVBucket'] /* its body is optional */ },
  { name: 'JSON sent as text/plain', body: () => '{"flow":"echo"}', headers: { 'content-type': 'text/plain' }, status: 415 },
  { name: 'JSON without a content type', body: () => Buffer.from('{"flow":"echo"}'), status: 415 },
  { name: 'JSON as application/jsonp', body: () => '{"flow":"echo"}', headers: { 'content-type': 'application/jsonp' }, status: 415 },
  { name: 'JSON as application/json-patch+json', body: () => '[]', headers: { 'content-type': 'application/json-patch+json' }, status: 415 },
  { name: 'two Content-Type headers', body: () => '{"flow":"echo"}', headers: { 'content-type': ['application/json', 'application/json'] }, status: 415 },
  { name: 'invalid UTF-8', body: () => INVALID_UTF8, headers: JSON_TYPE, status: 400 },
  { name: 'an overlong UTF-8 encoding', body: () => Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]), headers: JSON_TYPE, status: 400 },
  { name: '10,000-deep arrays', body: () => deepArrays(10_000), headers: JSON_TYPE, status: 400 },
  { name: '10,000-deep objects', body: () => deepObjects(10_000), headers: JSON_TYPE, status: 400 },
  { name: 'a __proto__ key', body: () => '{"__proto__": {"flow": "echo", "code": "123456", "admin": true}}', headers: JSON_TYPE, status: 400 },
  { name: 'a constructor key', body: () => '{"constructor": {"prototype": {"admin": true}}}', headers: JSON_TYPE, status: 400 },
  { name: 'a JSON array', body: () => '[{"flow":"echo"}]', headers: JSON_TYPE, status: 400 },
  { name: 'JSON null', body: () => 'null', headers: JSON_TYPE, status: 400 },
  { name: 'a JSON string', body: () => '"echo"', headers: JSON_TYPE, status: 400 },
  // A string that is no recovery code is a wrong code: 401 at sign-in, as a wrong TOTP code (issue 43).
  { name: 'a lone surrogate escape', body: () => '{"flow": "\\ud800", "code": "\\ud800", "secret": "\\ud800", "description": "\\ud800"}', headers: JSON_TYPE, status: 400, statusFor: { verifyRecoveryCode: 401 } },
];
const JSON_ROUTES: { operationId: string; method: string; path: (f: Fixture) => string; token?: (f: Fixture) => string }[] = [
  { operationId: 'createTrigger', method: 'POST', path: () => '/triggers' },
  { operationId: 'updateTrigger', method: 'PATCH', path: (f) => `/triggers/${f.hooks.open.id}` },
  { operationId: 'createKVBucket', method: 'PUT', path: () => `/storage/kv/${FRESH}` },
  { operationId: 'confirmTotpRegistration', method: 'POST', path: () => '/accounts/confirm-totp-registration' },
  { operationId: 'verifyRecoveryCode', method: 'POST', path: () => '/accounts/recovery-codes/verify' },
];
const bodyCases: HostileCase[] = JSON_ROUTES.flatMap((route) =>
  BODY_FAULTS.filter((fault) => !fault.skip?.includes(route.operationId)).map((fault): HostileCase => ({
    name: `${route.method} ${route.operationId} with ${fault.name}`,
    status: fault.statusFor?.[route.operationId] ?? fault.status,
    request: (f) => ({ method: route.method, path: route.path(f), headers: { ...bearer(f.owner), ...fault.headers }, body: fault.body() }),
  })));

const owned = (method: string, path: (f: Fixture) => string, extra: { headers?: OutgoingHttpHeaders; body?: Body } = {}) =>
  (f: Fixture): HttpReq => ({ method, path: path(f), headers: { ...bearer(f.owner), ...extra.headers }, body: extra.body });
const asOther = (method: string, path: (f: Fixture) => string, extra: { headers?: OutgoingHttpHeaders; body?: Body } = {}) =>
  (f: Fixture): HttpReq => ({ method, path: path(f), headers: { ...bearer(f.other), ...extra.headers }, body: extra.body });
const forgedCursor = (sk: unknown) => b64url({ sk });
const kv = (rest: string) => () => `/storage/kv/${rest}`;

const routeSpecificCases: HostileCase[] = [
  // Bodies a route refuses for what they say.
  { name: 'a duplicated key whose last value is invalid (trigger)', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"echo","flow":"../echo"}' }) },
  { name: 'an unknown flow', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"no-such-flow"}' }) },
  { name: 'a flow name with a path', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"../flows/echo"}' }) },
  { name: 'a trigger for another account (account_id field)', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: JSON.stringify({ flow: 'echo', account_id: OTHER }) }) },
  { name: 'a trigger with a chosen webhook_id', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: JSON.stringify({ flow: 'echo', webhook_id: 'x'.repeat(32) }) }) },
  { name: 'an unknown response mode', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"echo","response_mode":"sync"}' }) },
  { name: 'a * inside an event filter', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"echo","event_filter":["a*b"]}' }) },
  { name: '101 event filter entries', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: JSON.stringify({ flow: 'echo', event_filter: Array.from({ length: 101 }, (_, i) => `e${i}`) }) }) },
  { name: 'an unknown signature service', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"echo","signature":{"service":"acme_pay","secret":"s"}}' }) },
  { name: 'an empty signing secret', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"echo","signature":{"service":"github","secret":""}}' }) },
  { name: 'a signing secret over 1,024 characters', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: JSON.stringify({ flow: 'echo', signature: { service: 'github', secret: 's'.repeat(1025) } }) }) },
  { name: 'a custom scheme without its settings', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"echo","signature":{"service":"custom","secret":"s"}}' }) },
  { name: 'a custom scheme with md5', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: JSON.stringify({ flow: 'echo', signature: { service: 'custom', secret: 's', custom: { ...CUSTOM, algorithm: 'md5' } } }) }) },
  { name: 'a custom header name with a space', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: JSON.stringify({ flow: 'echo', signature: { service: 'custom', secret: 's', custom: { ...CUSTOM, header: 'x bad' } } }) }) },
  { name: 'a short standard_webhooks secret', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"echo","signature":{"service":"standard_webhooks","secret":"whsec_c2hvcnQ="}}' }) },
  { name: 'api_key_enabled as a string', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: '{"flow":"echo","api_key_enabled":"yes"}' }) },
  { name: 'a 9 MB flow name', status: 400, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: JSON.stringify({ flow: 'f'.repeat(9 * 1024 * 1024) }) }) },
  { name: 'a body over the gateway limit (10 MiB + 1)', status: 413, request: owned('POST', () => '/triggers', { headers: JSON_TYPE, body: Buffer.alloc(OVER_GATEWAY_LIMIT, 0x20) }) },
  { name: 'an empty PATCH', status: 400, request: owned('PATCH', (f) => `/triggers/${f.hooks.open.id}`, { headers: JSON_TYPE, body: '{}' }) },
  { name: 'a PATCH of the id', status: 400, request: owned('PATCH', (f) => `/triggers/${f.hooks.open.id}`, { headers: JSON_TYPE, body: '{"id":"0123"}' }) },
  { name: 'a PATCH of enabled as a string', status: 400, request: owned('PATCH', (f) => `/triggers/${f.hooks.open.id}`, { headers: JSON_TYPE, body: '{"enabled":"false"}' }) },
  { name: 'a PATCH of a signature without a secret', status: 400, request: owned('PATCH', (f) => `/triggers/${f.hooks.open.id}`, { headers: JSON_TYPE, body: '{"signature":{"service":"stripe"}}' }) },
  { name: 'a new API key for a trigger without one', status: 400, request: owned('POST', (f) => `/triggers/${f.hooks.open.id}/regenerate-api-key`) },
  { name: 'a duplicated key whose last value is invalid (bucket)', status: 400, request: owned('PUT', kv(FRESH), { headers: JSON_TYPE, body: '{"ttl_seconds":60,"ttl_seconds":-1}' }) },
  { name: 'an unknown bucket setting', status: 400, request: owned('PUT', kv(FRESH), { headers: JSON_TYPE, body: '{"owner":"someone-else"}' }) },
  { name: 'ttl_seconds as a float', status: 400, request: owned('PUT', kv(FRESH), { headers: JSON_TYPE, body: '{"ttl_seconds":1.5}' }) },
  { name: 'max_value_bytes over the ceiling', status: 400, request: owned('PUT', kv(FRESH), { headers: JSON_TYPE, body: '{"max_value_bytes":1e9}' }) },
  { name: 'a 1,025-byte description', status: 400, request: owned('PUT', kv(FRESH), { headers: JSON_TYPE, body: JSON.stringify({ description: 'd'.repeat(1025) }) }) },
  { name: 'an existing bucket created again (create-only)', status: 409, request: owned('PUT', kv(SEEDED), { headers: { ...JSON_TYPE, 'if-none-match': '*' }, body: '{"description":"replaced"}' }) },
  { name: 'a bucket PUT setting its name', status: 400, request: owned('PUT', kv(SEEDED), { headers: JSON_TYPE, body: '{"name":"other","description":"replaced"}' }) },
  { name: 'a numeric TOTP code', status: 400, request: owned('POST', () => '/accounts/confirm-totp-registration', { headers: JSON_TYPE, body: JSON.stringify({ code: 123456, secret: TOTP_SECRET }) }) },
  { name: 'a 5-digit TOTP code', status: 400, request: owned('POST', () => '/accounts/confirm-totp-registration', { headers: JSON_TYPE, body: JSON.stringify({ code: '12345', secret: TOTP_SECRET }) }) },
  { name: 'a TOTP code in Arabic-Indic digits', status: 400, request: owned('POST', () => '/accounts/confirm-totp-registration', { headers: JSON_TYPE, body: JSON.stringify({ code: '١٢٣٤٥٦', secret: TOTP_SECRET }) }) },
  { name: 'a 1 MB TOTP code', status: 400, request: owned('POST', () => '/accounts/confirm-totp-registration', { headers: JSON_TYPE, body: JSON.stringify({ code: '1'.repeat(1024 * 1024), secret: TOTP_SECRET }) }) },
  { name: 'a TOTP secret that is not base32', status: 400, request: owned('POST', () => '/accounts/confirm-totp-registration', { headers: JSON_TYPE, body: JSON.stringify({ code: '123456', secret: 'not base32!' }) }) },
  { name: 'a 1 MB TOTP secret', status: 400, request: owned('POST', () => '/accounts/confirm-totp-registration', { headers: JSON_TYPE, body: JSON.stringify({ code: '123456', secret: 'A'.repeat(1024 * 1024) }) }) },
  { name: 'no TOTP secret', status: 400, request: owned('POST', () => '/accounts/confirm-totp-registration', { headers: JSON_TYPE, body: '{"code":"123456"}' }) },
  { name: 'a numeric recovery code', status: 400, request: owned('POST', () => '/accounts/recovery-codes/verify', { headers: JSON_TYPE, body: '{"code":12345678}' }) },
  { name: 'a 1 MB recovery code', status: 401, request: owned('POST', () => '/accounts/recovery-codes/verify', { headers: JSON_TYPE, body: JSON.stringify({ code: 'c'.repeat(1024 * 1024) }) }) },

  // Another account's things: not found, and untouched.
  { name: "another account's trigger, read", status: 404, request: owned('GET', (f) => `/triggers/${f.otherHook.id}`) },
  { name: "another account's trigger, changed", status: 404, request: owned('PATCH', (f) => `/triggers/${f.otherHook.id}`, { headers: JSON_TYPE, body: '{"enabled":false}' }) },
  { name: "another account's trigger, deleted", status: 404, request: owned('DELETE', (f) => `/triggers/${f.otherHook.id}`) },
  { name: "another account's trigger, new URL", status: 404, request: owned('POST', (f) => `/triggers/${f.otherHook.id}/regenerate-url`) },
  { name: "another account's trigger, new API key", status: 404, request: owned('POST', (f) => `/triggers/${f.otherHook.id}/regenerate-api-key`) },
  { name: "another account's trigger, executions", status: 404, request: owned('GET', (f) => `/triggers/${f.otherHook.id}/executions`) },
  { name: "another account's API key, revoked", status: 404, request: owned('DELETE', (f) => `/api-keys/${f.otherApiKeyId}`) },
  { name: "another account's bucket, read", status: 404, request: asOther('GET', kv(SEEDED)) },
  { name: "another account's bucket, deleted", status: 404, request: asOther('DELETE', kv(SEEDED)) },
  { name: "another account's bucket, purged", status: 404, request: asOther('DELETE', kv(`${SEEDED}/purge`)) },
  { name: "another account's bucket, value written", status: 404, request: asOther('PUT', kv(`${SEEDED}/keys/a`), { headers: { 'content-type': 'text/plain' }, body: 'x' }) },
  { name: "another account's bucket, value deleted", status: 404, request: asOther('DELETE', kv(`${SEEDED}/keys/a`)) },

  // Ids that are not ids.
  { name: 'an unknown trigger id', status: 404, request: owned('GET', () => `/triggers/${unknownHex()}`) },
  { name: 'a trigger id that is not hex', status: 404, request: owned('GET', () => '/triggers/not-a-trigger-id') },
  { name: 'a trigger id of 5,000 characters', status: 404, request: owned('DELETE', () => `/triggers/${'a'.repeat(5000)}`) },
  { name: 'a trigger id of %2e%2e', status: 404, request: owned('GET', () => '/triggers/%2e%2e') },
  { name: 'a trigger id with an encoded NUL', status: 404, request: owned('DELETE', (f) => `/triggers/${f.hooks.open.id}%00`) },
  { name: 'a trigger id in upper case', status: 404, request: owned('DELETE', (f) => `/triggers/${f.hooks.open.id.toUpperCase()}`) },
  { name: 'an unknown API key id', status: 404, request: owned('DELETE', () => `/api-keys/${unknownHex()}`) },
  { name: 'an API key id that is not hex', status: 404, request: owned('DELETE', () => '/api-keys/zzzz') },
  { name: 'an API key id of %2e%2e%2f', status: 404, request: owned('DELETE', () => '/api-keys/%2e%2e%2f') },
  { name: 'an API key id with an encoded NUL', status: 404, request: owned('DELETE', (f) => `/api-keys/${f.apiKeyId}%00`) },

  // List parameters.
  ...['0', '-1', 'abc', '1e3', '1001', '99999999', '1&limit=2', '%00'].map((limit): HostileCase => ({
    name: `a key listing with limit=${limit}`, status: 400, request: owned('GET', kv(`${SEEDED}/keys?limit=${limit}`)),
  })),
  { name: 'an API key listing with limit=501', status: 400, request: owned('GET', () => '/api-keys?limit=501') },
  { name: 'a trigger listing with limit=0', status: 400, request: owned('GET', () => '/triggers?limit=0') },
  { name: 'an executions listing with limit=-5', status: 400, request: owned('GET', (f) => `/triggers/${f.hooks.open.id}/executions?limit=-5`) },
  { name: 'a key listing with a cursor that is not base64 JSON', status: 400, request: owned('GET', kv(`${SEEDED}/keys?cursor=%%%`)) },
  { name: 'a key listing with a cursor of JSON null', status: 400, request: owned('GET', kv(`${SEEDED}/keys?cursor=${b64url('null')}`)) },
  { name: 'a key listing with a cursor outside its prefix', status: 400, request: owned('GET', kv(`${SEEDED}/keys?prefix=a&cursor=${forgedCursor('zzz')}`)) },
  { name: 'a key listing with a 2,000-byte cursor key', status: 400, request: owned('GET', kv(`${SEEDED}/keys?cursor=${forgedCursor('k'.repeat(2000))}`)) },
  { name: 'a key listing with a 5,000-character cursor', status: 400, request: owned('GET', kv(`${SEEDED}/keys?cursor=${'A'.repeat(5000)}`)) },
  { name: 'a key listing with a NUL prefix', status: 400, request: owned('GET', kv(`${SEEDED}/keys?prefix=%00`)) },
  { name: 'a key listing with a 1,025-byte prefix', status: 400, request: owned('GET', kv(`${SEEDED}/keys?prefix=${'p'.repeat(1025)}`)) },
  { name: 'a key listing with a 12 KB query string', status: 400, request: owned('GET', kv(`${SEEDED}/keys?prefix=${'p'.repeat(12_000)}`)) },
  { name: 'an API key listing with a cursor outside the listing', status: 400, request: owned('GET', () => `/api-keys?cursor=${forgedCursor('ZZZ')}`) },
  { name: 'an API key listing with a 3,000-byte cursor key', status: 400, request: owned('GET', () => `/api-keys?cursor=${forgedCursor('K'.repeat(3000))}`) },
  { name: 'an API key listing with a garbage cursor', status: 400, request: owned('GET', () => '/api-keys?cursor=garbage') },
  {
    name: 'a trigger listing with a cursor outside the listing',
    status: 400,
    request: owned('GET', () => `/triggers?cursor=${forgedCursor('ZZZ')}`),
  },
  { name: 'a trigger listing with a 3,000-byte cursor key', status: 400, request: owned('GET', () => `/triggers?cursor=${forgedCursor('T'.repeat(3000))}`) },
  {
    name: 'an executions listing with a cursor outside the listing',
    status: 400,
    request: owned('GET', (f) => `/triggers/${f.hooks.open.id}/executions?cursor=${forgedCursor('ZZZ')}`),
  },
  { name: 'an executions listing with a 3,000-byte cursor key', status: 400, request: owned('GET', (f) => `/triggers/${f.hooks.open.id}/executions?cursor=${forgedCursor('E'.repeat(3000))}`) },

  // Path traversal and odd names in buckets and keys (node:http sends the path as written).
  { name: 'bucket ..', status: 400, request: owned('GET', kv('..')) },
  { name: 'bucket %2e%2e', status: 400, request: owned('DELETE', kv('%2e%2e')) },
  // API Gateway decodes the path before routing, so %2F splits the bucket into two segments: no route.
  { name: 'bucket ..%2Fapi-keys', status: 404, request: owned('GET', kv('..%2Fapi-keys')) },
  { name: 'bucket a%2Fb', status: 404, request: owned('GET', kv('a%2Fb')) },
  { name: 'bucket with an encoded NUL', status: 400, request: owned('DELETE', kv(`${SEEDED}%00`)) },
  { name: 'bucket of 65 characters', status: 400, request: owned('PUT', kv('b'.repeat(65))) },
  { name: 'bucket with a dot', status: 400, request: owned('PUT', kv('a.b')) },
  { name: 'bucket in Unicode', status: 400, request: owned('PUT', kv('%C3%A9t%C3%A9')) },
  { name: 'bucket with invalid percent-encoding', status: 404, request: owned('GET', kv('%ZZ')) },
  { name: 'bucket of an encoded surrogate', status: 404, request: owned('GET', kv('%ED%A0%80')) },
  { name: 'key ../../api-keys (raw dots)', status: 400, request: owned('GET', kv(`${SEEDED}/keys/../../api-keys`)) },
  { name: 'key %2e%2e/%2e%2e/purge', status: 400, request: owned('DELETE', kv(`${SEEDED}/keys/%2e%2e/%2e%2e/purge`)) },
  { name: 'key a%2F..%2F..%2Fb', status: 400, request: owned('GET', kv(`${SEEDED}/keys/a%2F..%2F..%2Fb`)) },
  { name: 'key a/.. (delete)', status: 400, request: owned('DELETE', kv(`${SEEDED}/keys/a/..`)) },
  { name: 'key . (write)', status: 400, request: owned('PUT', kv(`${SEEDED}/keys/.`), { headers: { 'content-type': 'text/plain' }, body: 'x' }) },
  { name: 'key %2e%2e (write)', status: 400, request: owned('PUT', kv(`${SEEDED}/keys/%2e%2e`), { headers: { 'content-type': 'text/plain' }, body: 'x' }) },
  { name: 'key with an encoded NUL', status: 400, request: owned('GET', kv(`${SEEDED}/keys/a%00`)) },
  { name: 'key with an encoded CR LF', status: 400, request: owned('PUT', kv(`${SEEDED}/keys/a%0D%0AX-Injected:%201`), { headers: { 'content-type': 'text/plain' }, body: 'x' }) },
  { name: 'key with an encoded C1 control', status: 400, request: owned('GET', kv(`${SEEDED}/keys/a%C2%85`)) },
  { name: 'key of 1,025 bytes', status: 400, request: owned('PUT', kv(`${SEEDED}/keys/${'k'.repeat(1025)}`), { headers: { 'content-type': 'text/plain' }, body: 'x' }) },
  { name: 'key of an overlong UTF-8 slash (%C0%AF)', status: 404, request: owned('GET', kv(`${SEEDED}/keys/a%C0%AFb`)) },
  { name: 'key of an encoded surrogate', status: 404, request: owned('GET', kv(`${SEEDED}/keys/%ED%A0%80`)) },
  { name: 'a missing key', status: 404, request: owned('GET', kv(`${SEEDED}/keys/missing`)) },
  { name: 'a missing key deleted', status: 404, request: owned('DELETE', kv(`${SEEDED}/keys/missing`)) },
  { name: 'a missing bucket purged', status: 404, request: owned('DELETE', kv(`${FRESH}/purge`)) },
  { name: 'a value over the bucket limit', status: 413, request: owned('PUT', kv(`${SEEDED}/keys/a`), { headers: { 'content-type': 'text/plain' }, body: Buffer.alloc(SEEDED_MAX_VALUE_BYTES + 1, 0x61) }) },
  { name: 'a value over the gateway limit', status: 413, request: owned('PUT', kv(`${SEEDED}/keys/a`), { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(OVER_GATEWAY_LIMIT) }) },
  { name: 'a value with a 300-character content type', status: 400, request: owned('PUT', kv(`${SEEDED}/keys/a`), { headers: { 'content-type': `text/${'x'.repeat(300)}` }, body: 'x' }) },
  { name: 'a value with a Latin-1 content type', status: 400, request: owned('PUT', kv(`${SEEDED}/keys/a`), { headers: { 'content-type': 'text/plain; x=\u00e9' }, body: 'x' }) },

  // Methods no route has.
  ...([
    ['POST', '/health'], ['DELETE', '/openapi.json'], ['PUT', '/api-keys'], ['DELETE', '/api-keys'], ['GET', '/api-keys/0123'],
    ['POST', kv(SEEDED)()], ['PATCH', kv(SEEDED)()], ['POST', kv(`${SEEDED}/purge`)()], ['GET', kv(`${SEEDED}/purge`)()],
    ['PUT', kv(`${SEEDED}/keys`)()], ['POST', kv(`${SEEDED}/keys/a`)()], ['PATCH', kv(`${SEEDED}/keys/a`)()], ['OPTIONS', kv(`${SEEDED}/keys/a`)()],
    ['GET', '/accounts/totp-registration'], ['PUT', '/accounts/confirm-totp-registration'], ['DELETE', '/accounts/recovery-codes/verify'],
    ['PUT', '/triggers'], ['DELETE', '/triggers'], ['PUT', '/triggers/0123'], ['GET', '/triggers/0123/regenerate-url'], ['POST', '/triggers/0123/executions'],
    ['TRACE', '/health'], ['POST', '/storage/kv'], ['DELETE', '/storage/kv'],
  ] as const).map(([method, path]): HostileCase => ({ name: `${method} ${path}`, status: 405, request: owned(method, () => path) })),

  // Paths no route has.
  ...['/', '/nope', '/health/', '//health', '/HEALTH', '/health%00', '/storage', '/storage/kv/', '/api-keys/', '/api-keys/a/b',
    '/triggers/a/b/c', '/webhooks', '/webhooks/', '/%ZZ', '/..', '/openapi.json/..%2F', `/${'x'.repeat(12_000)}`,
  ].map((path): HostileCase => ({ name: `unknown path ${path.slice(0, 40)}`, status: 404, request: owned('GET', () => path) })),

  // Header names and values at the edges.
  { name: 'an Authorization header of 15,000 characters', status: 401, request: () => ({ method: 'GET', path: '/api-keys', headers: { authorization: `Bearer ${'a'.repeat(15_000)}` } }) },
  { name: 'an X-Api-Key of 8,193 characters', status: 401, request: () => ({ method: 'GET', path: '/api-keys', headers: { 'x-api-key': 'k'.repeat(8193) } }) },
  { name: 'an empty X-Api-Key', status: 401, request: () => ({ method: 'GET', path: '/api-keys', headers: { 'x-api-key': '' } }) },
  { name: 'an X-Api-Key in Latin-1', status: 401, request: () => ({ method: 'GET', path: '/api-keys', headers: { 'x-api-key': 'fgk_\u00e9\u00ff' } }) },
  { name: 'an X-Api-Key with a space inside', status: 401, request: (f) => ({ method: 'GET', path: '/api-keys', headers: { 'x-api-key': `${f.apiKey.slice(0, 10)} ${f.apiKey.slice(10)}` } }) },
  { name: 'an X-Api-Key followed by a second key', status: 401, request: (f) => ({ method: 'GET', path: '/api-keys', headers: { 'x-api-key': [f.apiKey, 'fgk_other'] } }) },
  { name: 'a valid token plus a bogus second Authorization', status: 401, request: (f) => ({ method: 'GET', path: '/api-keys', headers: { authorization: [`Bearer ${f.owner}`, 'Bearer x.y.z'] } }) },
  { name: 'a bogus Authorization beside a valid X-Api-Key', status: 401, request: (f) => ({ method: 'GET', path: '/api-keys', headers: { authorization: 'Bearer x.y.z', 'x-api-key': f.apiKey } }) },
  { name: 'odd but legal header names', status: 401, request: () => ({ method: 'GET', path: '/api-keys', headers: { "x-!#$%&'*+.^_`|~": 'v', 'x-1': '', 'x---': 'v' } }) },
  // Node keeps the first ~1,000 header lines and drops the rest, Host included (node:http sends it last).
  { name: '1,000 headers', status: 400, request: () => ({ method: 'GET', path: '/api-keys', headers: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`x-h${i}`, 'v'])) }) },
  { name: 'headers over 16 KB in total', status: 431, request: () => ({ method: 'GET', path: '/api-keys', headers: { 'x-a': 'a'.repeat(9000), 'x-b': 'b'.repeat(9000) } }) },
  { name: 'a query string over 16 KB', status: 431, request: owned('GET', kv(`${SEEDED}/keys?prefix=${'q'.repeat(17_000)}`)) },

  // Faults of the protocol itself, which never reach a handler.
  { name: 'raw: a folded header line', status: 400, request: () => raw('GET /api-keys HTTP/1.1', 'Authorization: Bearer\r\n x.y.z\r\n') },
  { name: 'raw: a NUL in a header value', status: 400, request: () => raw('GET /api-keys HTTP/1.1', 'X-Api-Key: a\u0000b\r\n') },
  { name: 'raw: a space before the colon', status: 400, request: () => raw('GET /api-keys HTTP/1.1', 'Authorization : Bearer x\r\n') },
  { name: 'raw: an empty header name', status: 400, request: () => raw('GET /api-keys HTTP/1.1', ': x\r\n') },
  { name: 'raw: Content-Length and Transfer-Encoding together', status: 400, request: () => raw('POST /triggers HTTP/1.1', 'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n') },
  { name: 'raw: a malformed chunk size', status: 400, request: () => raw('POST /triggers HTTP/1.1', 'Transfer-Encoding: chunked\r\n', 'ZZ\r\nab\r\n0\r\n\r\n') },
  { name: 'raw: a negative Content-Length', status: 400, request: () => raw('POST /triggers HTTP/1.1', 'Content-Length: -1\r\n') },
  { name: 'raw: two different Content-Lengths', status: 400, request: () => raw('POST /triggers HTTP/1.1', 'Content-Length: 1\r\nContent-Length: 2\r\n', 'ab') },
  { name: 'raw: bare LF line endings', status: 400, request: () => ({ raw: 'GET /api-keys HTTP/1.1\nHost: x\nConnection: close\n\n' }) },
  { name: 'raw: binary garbage', status: 400, request: () => ({ raw: Buffer.from([0, 1, 2, 0xff, 13, 10, 13, 10]) }) },
  { name: 'raw: an unknown method', status: 400, request: () => raw('FOO /health HTTP/1.1') },
  { name: 'raw: an HTTP/2 preface', status: 400, request: () => ({ raw: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' }) },
  { name: 'raw: CONNECT', status: 405, request: () => ({ raw: 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n' }) },
  { name: 'raw: a request line over 16 KB', status: 431, request: () => raw(`GET /health?${'q'.repeat(17_000)} HTTP/1.1`) },
  { name: 'raw: a space in the path', status: 400, request: () => raw('GET /storage/kv/a b HTTP/1.1') },
  { name: 'raw: non-ASCII bytes in the path', status: 400, request: () => ({ raw: Buffer.concat([Buffer.from('GET /storage/kv/'), Buffer.from([0xe9, 0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]) }) },
  { name: 'raw: an absolute-form target', status: 404, request: () => raw('GET http://evil.example/api-keys/../health HTTP/1.1') },
  { name: 'raw: an asterisk target', status: 404, request: () => raw('OPTIONS * HTTP/1.1') },
  { name: 'raw: HTTP/1.1 without Host', status: 400, request: () => ({ raw: 'GET /api-keys HTTP/1.1\r\nConnection: close\r\n\r\n' }) },
  { name: 'raw: HTTP/1.0 without Host', status: 401, request: () => ({ raw: 'GET /api-keys HTTP/1.0\r\n\r\n' }) },
];

// ---------------------------------------------------------------------------------------------
// Webhook deliveries that must be refused before any flow runs.

const EVENT = JSON.stringify({ id: 'evt_hostile', type: 'poison', data: { amount: 1 } });
const OTHER_EVENT = JSON.stringify({ id: 'evt_hostile', type: 'poison', data: { amount: 1_000_000 } });
const deliverTo = (hook: HookName | ((f: Fixture) => string), body: Body, headers: OutgoingHttpHeaders = {}, method = 'POST', query = '') =>
  (f: Fixture): HttpReq => ({
    method,
    path: `${typeof hook === 'function' ? hook(f) : f.hooks[hook].path}${query}`,
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
/** A delivery whose headers are computed when it is sent (signatures, timestamps). */
const signedDelivery = (hook: HookName, body: Body, headers: (f: Fixture) => OutgoingHttpHeaders | Promise<OutgoingHttpHeaders>, query = '') =>
  async (f: Fixture): Promise<HttpReq> => deliverTo(hook, body, await headers(f), 'POST', query)(f);
const tooOld = () => nowSeconds() - 600;
const tooNew = () => nowSeconds() + 600;

const webhookCases: HostileCase[] = [
  // Ids.
  { name: 'webhook: an unknown id', status: 404, request: deliverTo(() => `/webhooks/${unknownWebhookId()}`, EVENT) },
  { name: 'webhook: a short id', status: 404, request: deliverTo(() => '/webhooks/short', EVENT) },
  { name: 'webhook: a 33-character id', status: 404, request: deliverTo((f) => `/webhooks/${f.hooks.open.webhookId}x`, EVENT) },
  { name: 'webhook: an id with an encoded NUL', status: 404, request: deliverTo((f) => `/webhooks/${f.hooks.open.webhookId.slice(0, 31)}%00`, EVENT) },
  { name: 'webhook: %2e%2e', status: 404, request: deliverTo(() => '/webhooks/%2e%2e', EVENT) },
  { name: 'webhook: ..%2F..%2Fapi-keys', status: 404, request: deliverTo(() => '/webhooks/..%2F..%2Fapi-keys', EVENT) },
  { name: 'webhook: the trigger id instead of the webhook id', status: 404, request: deliverTo((f) => `/webhooks/${f.hooks.open.id}`, EVENT) },
  { name: 'webhook: a valid delivery to a disabled trigger', status: 404, request: deliverTo('disabled', EVENT) },
  { name: 'webhook: a path below the id', status: 404, request: deliverTo((f) => `${f.hooks.open.path}/extra`, EVENT) },

  // Methods.
  ...(['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const).map((method): HostileCase => ({
    name: `webhook: ${method} to an open trigger`, status: 405, request: deliverTo('open', method === 'GET' || method === 'OPTIONS' ? '' : EVENT, {}, method),
  })),

  // Bodies an open trigger (no key, no signature) must refuse before running its flow.
  { name: 'webhook: truncated JSON', status: 400, request: deliverTo('open', '{"type": "poi') },
  { name: 'webhook: JSON with a trailing comma', status: 400, request: deliverTo('open', '{"type": "poison",}') },
  { name: 'webhook: an empty body labelled JSON', status: 400, request: deliverTo('open', '') },
  { name: 'webhook: invalid UTF-8 JSON', status: 400, request: deliverTo('open', INVALID_UTF8) },
  { name: 'webhook: invalid UTF-8 in a form', status: 400, request: deliverTo('open', Buffer.from([0x61, 0x3d, 0xff]), { 'content-type': 'application/x-www-form-urlencoded' }) },
  { name: 'webhook: 10,000-deep arrays', status: 400, request: deliverTo('open', deepArrays(10_000)) },
  { name: 'webhook: 10,000-deep objects', status: 400, request: deliverTo('open', deepObjects(10_000)) },
  { name: 'webhook: 257-deep arrays (one past the limit)', status: 400, request: deliverTo('open', deepArrays(257)) },
  { name: 'webhook: text/plain', status: 415, request: deliverTo('open', EVENT, { 'content-type': 'text/plain' }) },
  { name: 'webhook: no content type', status: 415, request: (f) => ({ method: 'POST', path: f.hooks.open.path, body: Buffer.from(EVENT) }) },
  { name: 'webhook: application/xml', status: 415, request: deliverTo('open', '<a/>', { 'content-type': 'application/xml' }) },
  { name: 'webhook: two Content-Type headers', status: 415, request: deliverTo('open', EVENT, { 'content-type': ['application/json', 'application/json'] }) },
  { name: 'webhook: multipart without a boundary', status: 400, request: deliverTo('open', 'x', { 'content-type': 'multipart/form-data' }) },
  { name: 'webhook: multipart that is not multipart', status: 400, request: deliverTo('open', 'garbage', { 'content-type': 'multipart/form-data; boundary=xyz' }) },
  { name: 'webhook: truncated multipart', status: 400, request: deliverTo('open', '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nv', { 'content-type': 'multipart/form-data; boundary=xyz' }) },
  { name: 'webhook: a body over the receiver limit (1 MiB + 1)', status: 413, request: deliverTo('open', Buffer.alloc(OVER_WEBHOOK_LIMIT, 0x20)) },
  { name: 'webhook: a body over the gateway limit (10 MiB + 1)', status: 413, request: deliverTo('open', Buffer.alloc(OVER_GATEWAY_LIMIT, 0x20)) },

  // API keys.
  { name: 'webhook: no API key', status: 401, request: deliverTo('keyed', EVENT) },
  { name: 'webhook: a wrong API key', status: 401, request: deliverTo('keyed', EVENT, { 'x-api-key': `fgk_${randomBytes(32).toString('base64url')}` }) },
  { name: 'webhook: an empty API key', status: 401, request: deliverTo('keyed', EVENT, { 'x-api-key': '' }) },
  { name: 'webhook: the gateway API key', status: 401, request: (f) => deliverTo('keyed', EVENT, { 'x-api-key': f.apiKey })(f) },
  { name: "webhook: another trigger's API key", status: 401, request: (f) => deliverTo('keyed', EVENT, { 'x-api-key': f.hooks.keyedGithub.apiKey! })(f) },
  { name: 'webhook: the API key twice in two headers', status: 401, request: (f) => deliverTo('keyed', EVENT, { 'x-api-key': [f.hooks.keyed.apiKey!, f.hooks.keyed.apiKey!] })(f) },
  { name: 'webhook: the API key twice in the query', status: 401, request: (f) => deliverTo('keyed', EVENT, {}, 'POST', `?api_key=${f.hooks.keyed.apiKey}&api_key=${f.hooks.keyed.apiKey}`)(f) },
  { name: 'webhook: an empty api_key query beside a valid header', status: 401, request: (f) => deliverTo('keyed', EVENT, { 'x-api-key': f.hooks.keyed.apiKey! }, 'POST', '?api_key=')(f) },
  { name: 'webhook: the API key under another header name', status: 401, request: (f) => deliverTo('keyed', EVENT, { authorization: `Bearer ${f.hooks.keyed.apiKey}` })(f) },
  { name: 'webhook: the API key in upper case', status: 401, request: (f) => deliverTo('keyed', EVENT, { 'x-api-key': f.hooks.keyed.apiKey!.toUpperCase() })(f) },
  { name: 'webhook: a 10,000-character API key', status: 401, request: deliverTo('keyed', EVENT, { 'x-api-key': 'k'.repeat(10_000) }) },
  { name: 'webhook: an API key with invalid percent-encoding in the query', status: 401, request: deliverTo('keyed', EVENT, {}, 'POST', '?api_key=%ZZ%00') },

  // Stripe.
  { name: 'stripe: no signature', status: 401, request: deliverTo('stripe', EVENT) },
  { name: 'stripe: garbage', status: 401, request: deliverTo('stripe', EVENT, { 'stripe-signature': 'garbage' }) },
  { name: 'stripe: another secret', status: 401, request: signedDelivery('stripe', EVENT, () => signStripe({ secret: 'whsec_wrong', body: EVENT, timestamp: nowSeconds() })) },
  { name: 'stripe: a stale timestamp (replay)', status: 401, request: signedDelivery('stripe', EVENT, () => signStripe({ secret: SECRETS.stripe, body: EVENT, timestamp: tooOld() })) },
  { name: 'stripe: a timestamp from the future', status: 401, request: signedDelivery('stripe', EVENT, () => signStripe({ secret: SECRETS.stripe, body: EVENT, timestamp: tooNew() })) },
  { name: 'stripe: a signature of another body', status: 401, request: signedDelivery('stripe', OTHER_EVENT, () => signStripe({ secret: SECRETS.stripe, body: EVENT, timestamp: nowSeconds() })) },
  { name: 'stripe: a fresh timestamp on an old signature', status: 401, request: signedDelivery('stripe', EVENT, () => {
    const header = signStripe({ secret: SECRETS.stripe, body: EVENT, timestamp: tooOld() })['stripe-signature']!;
    return { 'stripe-signature': header.replace(/^t=\d+/, `t=${nowSeconds()}`) };
  }) },
  { name: 'stripe: only a v0 signature', status: 401, request: signedDelivery('stripe', EVENT, () => ({
    'stripe-signature': signStripe({ secret: SECRETS.stripe, body: EVENT, timestamp: nowSeconds() })['stripe-signature']!.replace('v1=', 'v0='),
  })) },
  { name: 'stripe: 150 junk signatures', status: 401, request: signedDelivery('stripe', EVENT, () => ({ 'stripe-signature': `t=${nowSeconds()},${Array.from({ length: 150 }, () => `v1=${'0'.repeat(64)}`).join(',')}` })) },
  { name: 'stripe: a 40 KB signature header', status: 431, request: signedDelivery('stripe', EVENT, () => ({ 'stripe-signature': `t=${nowSeconds()},v1=${'0'.repeat(40_000)}` })) },
  { name: 'stripe: two signature headers, both wrong', status: 401, request: signedDelivery('stripe', EVENT, () => ({ 'stripe-signature': [`t=${nowSeconds()},v1=${'a'.repeat(64)}`, `t=${nowSeconds()},v1=${'b'.repeat(64)}`] })) },

  // GitHub.
  { name: 'github: no signature', status: 401, request: deliverTo('github', EVENT) },
  { name: 'github: only the SHA-1 header', status: 401, request: deliverTo('github', EVENT, { 'x-hub-signature': `sha1=${createHmac('sha1', SECRETS.github).update(EVENT).digest('hex')}` }) },
  { name: 'github: another secret', status: 401, request: signedDelivery('github', EVENT, () => signGithub({ secret: 'wrong', body: EVENT })) },
  { name: 'github: a signature of another body', status: 401, request: signedDelivery('github', OTHER_EVENT, () => signGithub({ secret: SECRETS.github, body: EVENT })) },
  { name: 'github: an empty digest', status: 401, request: deliverTo('github', EVENT, { 'x-hub-signature-256': 'sha256=' }) },
  { name: 'github: a truncated digest', status: 401, request: signedDelivery('github', EVENT, async () => ({ 'x-hub-signature-256': (await signGithub({ secret: SECRETS.github, body: EVENT }))['x-hub-signature-256']!.slice(0, -2) })) },
  { name: 'github: a valid signature for a body that is not JSON', status: 400, request: signedDelivery('github', '{"not json', () => signGithub({ secret: SECRETS.github, body: '{"not json' })) },
  { name: 'github: a valid signature, 10,000-deep', status: 400, request: signedDelivery('github', deepArrays(10_000), () => signGithub({ secret: SECRETS.github, body: deepArrays(10_000) })) },
  { name: 'github: a valid signature over text/plain', status: 415, request: signedDelivery('github', EVENT, async () => ({ ...(await signGithub({ secret: SECRETS.github, body: EVENT })), 'content-type': 'text/plain' })) },

  // Slack.
  { name: 'slack: no signature', status: 401, request: deliverTo('slack', EVENT) },
  { name: 'slack: a stale timestamp (replay)', status: 401, request: signedDelivery('slack', EVENT, () => signSlack({ secret: SECRETS.slack, body: EVENT, timestamp: tooOld() })) },
  { name: 'slack: a timestamp from the future', status: 401, request: signedDelivery('slack', EVENT, () => signSlack({ secret: SECRETS.slack, body: EVENT, timestamp: tooNew() })) },
  { name: 'slack: an old signature with a fresh timestamp', status: 401, request: signedDelivery('slack', EVENT, () => ({
    ...signSlack({ secret: SECRETS.slack, body: EVENT, timestamp: tooOld() }), 'x-slack-request-timestamp': String(nowSeconds()),
  })) },
  { name: 'slack: no timestamp', status: 401, request: signedDelivery('slack', EVENT, () => ({ 'x-slack-signature': signSlack({ secret: SECRETS.slack, body: EVENT, timestamp: nowSeconds() })['x-slack-signature']! })) },
  { name: 'slack: a timestamp in exponent notation', status: 401, request: signedDelivery('slack', EVENT, () => {
    const timestamp = nowSeconds();
    return { ...signSlack({ secret: SECRETS.slack, body: EVENT, timestamp }), 'x-slack-request-timestamp': `${timestamp / 10}e1` };
  }) },
  { name: 'slack: another version prefix', status: 401, request: signedDelivery('slack', EVENT, () => {
    const headers = signSlack({ secret: SECRETS.slack, body: EVENT, timestamp: nowSeconds() });
    return { ...headers, 'x-slack-signature': headers['x-slack-signature']!.replace('v0=', 'v1=') };
  }) },
  { name: 'slack: another secret', status: 401, request: signedDelivery('slack', EVENT, () => signSlack({ secret: 'wrong', body: EVENT, timestamp: nowSeconds() })) },

  // Shopify.
  { name: 'shopify: no signature', status: 401, request: deliverTo('shopify', EVENT) },
  { name: 'shopify: another secret', status: 401, request: signedDelivery('shopify', EVENT, () => signShopify({ secret: 'wrong', body: EVENT })) },
  { name: 'shopify: the digest in hex', status: 401, request: deliverTo('shopify', EVENT, { 'x-shopify-hmac-sha256': createHmac('sha256', SECRETS.shopify).update(EVENT).digest('hex') }) },
  { name: 'shopify: a signature of another body', status: 401, request: signedDelivery('shopify', OTHER_EVENT, () => signShopify({ secret: SECRETS.shopify, body: EVENT })) },

  // Twilio.
  { name: 'twilio: no signature', status: 401, request: deliverTo('twilio', EVENT) },
  { name: 'twilio: signed for another URL', status: 401, request: async (f) => {
    const signed = signTwilio({ authToken: SECRETS.twilio, url: `${f.hooks.twilio.url}?tenant=other`, body: 'Body=hi', contentType: 'application/x-www-form-urlencoded' });
    return { method: 'POST', path: f.hooks.twilio.path, headers: signed.headers, body: 'Body=hi' };
  } },
  { name: 'twilio: signed for the URL a forged Host header names, not the configured one', status: 401, request: async (f) => {
    // Before, the URL was rebuilt from Host (and X-Forwarded-*): whoever wrote the header chose what was checked.
    const url = `http://attacker.example:${new URL(stack.baseUrl).port}${f.hooks.twilio.path}`;
    const signed = signTwilio({ authToken: SECRETS.twilio, url, body: 'Body=hi', contentType: 'application/x-www-form-urlencoded' });
    return { method: 'POST', path: f.hooks.twilio.path, headers: { ...signed.headers, host: 'attacker.example', 'x-forwarded-host': 'attacker.example' }, body: 'Body=hi' };
  } },
  { name: 'twilio: another auth token', status: 401, request: async (f) => {
    const signed = signTwilio({ authToken: 'wrong', url: f.hooks.twilio.url, body: 'Body=hi', contentType: 'application/x-www-form-urlencoded' });
    return { method: 'POST', path: f.hooks.twilio.path, headers: signed.headers, body: 'Body=hi' };
  } },
  { name: 'twilio: form parameters changed after signing', status: 401, request: async (f) => {
    const signed = signTwilio({ authToken: SECRETS.twilio, url: f.hooks.twilio.url, body: 'Body=hi', contentType: 'application/x-www-form-urlencoded' });
    return { method: 'POST', path: f.hooks.twilio.path, headers: signed.headers, body: 'Body=hi&Amount=1000000' };
  } },

  // Standard Webhooks.
  { name: 'standard_webhooks: no signature', status: 401, request: deliverTo('standard', EVENT) },
  { name: 'standard_webhooks: a stale timestamp (replay)', status: 401, request: signedDelivery('standard', EVENT, () => signStandardWebhooks({ secret: SECRETS.standard_webhooks, id: 'msg_1', timestamp: tooOld(), body: EVENT })) },
  { name: 'standard_webhooks: a timestamp from the future', status: 401, request: signedDelivery('standard', EVENT, () => signStandardWebhooks({ secret: SECRETS.standard_webhooks, id: 'msg_1', timestamp: tooNew(), body: EVENT })) },
  { name: 'standard_webhooks: replayed under another message id', status: 401, request: signedDelivery('standard', EVENT, () => ({
    ...signStandardWebhooks({ secret: SECRETS.standard_webhooks, id: 'msg_1', timestamp: nowSeconds(), body: EVENT }), 'webhook-id': 'msg_2',
  })) },
  { name: 'standard_webhooks: no message id', status: 401, request: signedDelivery('standard', EVENT, () => {
    const { 'webhook-id': _id, ...rest } = signStandardWebhooks({ secret: SECRETS.standard_webhooks, id: 'msg_1', timestamp: nowSeconds(), body: EVENT });
    return rest;
  }) },
  { name: 'standard_webhooks: another secret', status: 401, request: signedDelivery('standard', EVENT, () => signStandardWebhooks({ secret: 'whsec_dGhpcyBpcyBhIGRpZmZlcmVudCBzZWNyZXQga2V5', id: 'msg_1', timestamp: nowSeconds(), body: EVENT })) },
  { name: 'standard_webhooks: an asymmetric (v1a) signature', status: 401, request: signedDelivery('standard', EVENT, () => ({
    'webhook-id': 'msg_1', 'webhook-timestamp': String(nowSeconds()), 'webhook-signature': `v1a,${randomBytes(64).toString('base64')}`,
  })) },

  // Custom HMAC.
  { name: 'custom: no signature', status: 401, request: deliverTo('custom', EVENT) },
  { name: 'custom: without its prefix', status: 401, request: signedDelivery('custom', EVENT, () => {
    const headers = signCustom(CUSTOM, SECRETS.custom, EVENT, nowSeconds());
    return { ...headers, 'x-signature': headers['x-signature']!.slice(CUSTOM.prefix.length) };
  }) },
  { name: 'custom: without its timestamp', status: 401, request: signedDelivery('custom', EVENT, () => ({ 'x-signature': signCustom(CUSTOM, SECRETS.custom, EVENT, nowSeconds())['x-signature']! })) },
  { name: 'custom: a stale timestamp (replay)', status: 401, request: signedDelivery('custom', EVENT, () => signCustom(CUSTOM, SECRETS.custom, EVENT, tooOld())) },
  { name: 'custom: the digest in base64', status: 401, request: signedDelivery('custom', EVENT, () => signCustom({ ...CUSTOM, encoding: 'base64' }, SECRETS.custom, EVENT, nowSeconds())) },

  // Both checks, and the wait mode.
  { name: 'key and signature: a valid signature without the key', status: 401, request: signedDelivery('keyedGithub', EVENT, () => signGithub({ secret: SECRETS.github, body: EVENT })) },
  { name: 'key and signature: the key without a signature', status: 401, request: (f) => deliverTo('keyedGithub', EVENT, { 'x-api-key': f.hooks.keyedGithub.apiKey! })(f) },
  { name: 'key and signature: the key and a signature by another secret', status: 401, request: signedDelivery('keyedGithub', EVENT, async (f) => ({ ...(await signGithub({ secret: 'wrong', body: EVENT })), 'x-api-key': f.hooks.keyedGithub.apiKey! })) },
  { name: 'wait mode: a forged signature on a flow that would fail', status: 401, request: signedDelivery('wait', EVENT, () => signGithub({ secret: 'wrong', body: EVENT })) },
  { name: 'wait mode: a signature of another body', status: 401, request: signedDelivery('wait', OTHER_EVENT, () => signGithub({ secret: SECRETS.github, body: EVENT })) },
  { name: "replay across triggers: a GitHub signature sent to the Shopify trigger", status: 401, request: signedDelivery('shopify', EVENT, () => signGithub({ secret: SECRETS.github, body: EVENT })) },
];

const CASES: HostileCase[] = [...credentialCases, ...tokenCases, ...bodyCases, ...routeSpecificCases, ...webhookCases];

// ---------------------------------------------------------------------------------------------
// What must not change.

const keyPath = (key: string) => `/storage/kv/${SEEDED}/keys/${key.split('/').map(encodeURIComponent).join('/')}`;

async function storedState(f: Fixture) {
  const keys = await call(stack, 'GET', `/storage/kv/${SEEDED}/keys?limit=1000`, { token: f.owner });
  const values: Record<string, unknown> = {};
  for (const key of keys.json.data.keys as string[]) {
    const res = await fetch(stack.baseUrl + keyPath(key), { headers: bearer(f.owner) });
    values[key] = { status: res.status, type: res.headers.get('content-type'), base64: Buffer.from(await res.arrayBuffer()).toString('base64') };
  }
  const list = async (path: string, token: string) => (await call(stack, 'GET', path, { token })).json;
  return {
    bucket: await list(`/storage/kv/${SEEDED}`, f.owner),
    keys: keys.json,
    values,
    fresh: (await call(stack, 'GET', `/storage/kv/${FRESH}`, { token: f.owner })).status,
    triggers: await list('/triggers?limit=500', f.owner),
    otherTriggers: await list('/triggers?limit=500', f.other),
    apiKeys: await list('/api-keys?limit=500', f.owner),
    otherApiKeys: await list('/api-keys?limit=500', f.other),
  };
}

async function allExecutions(f: Fixture) {
  const byTrigger: Record<string, unknown[]> = {};
  for (const [name, hook] of [...Object.entries(f.hooks), ['other', f.otherHook] as const]) {
    const token = name === 'other' ? f.other : f.owner;
    byTrigger[name] = (await call(stack, 'GET', `/triggers/${hook.id}/executions?limit=500`, { token })).json.data.executions;
  }
  return byTrigger;
}

let before: Awaited<ReturnType<typeof storedState>>;

beforeAll(async () => {
  fx.jwtSecret = stack.jwtSecret;
  fx.owner = await stack.token(OWNER);
  fx.other = await stack.token(OTHER);
  const key = await call(stack, 'POST', '/api-keys', { token: fx.owner });
  const otherKey = await call(stack, 'POST', '/api-keys', { token: fx.other });
  Object.assign(fx, { apiKey: key.json.data.api_key, apiKeyId: key.json.data.id, otherApiKeyId: otherKey.json.data.id });

  expect((await call(stack, 'PUT', `/storage/kv/${SEEDED}`, { token: fx.owner, body: { description: 'hostile corpus', max_value_bytes: SEEDED_MAX_VALUE_BYTES } })).status).toBe(201);
  for (const [k, value] of Object.entries(SEEDED_VALUES)) {
    const res = await fetch(stack.baseUrl + keyPath(k), { method: 'PUT', headers: { ...bearer(fx.owner), 'content-type': value.type }, body: value.body });
    expect(res.status).toBe(200);
  }

  // Each hostile request goes to the API's port, so each trigger is reached by the API's route (the
  // same receiver as behind the function URL; test/e2e/function-url.test.ts covers that door).
  const hook = (trigger: Awaited<ReturnType<typeof createTrigger>>): Hook => {
    const url = `${stack.webhookBaseUrl}/${trigger.webhook_id}`;
    return { id: trigger.id, webhookId: trigger.webhook_id, url, path: new URL(url).pathname, apiKey: trigger.api_key };
  };
  fx.hooks = {} as Record<HookName, Hook>;
  for (const [name, settings] of Object.entries(TRIGGER_SETTINGS)) fx.hooks[name as HookName] = hook(await createTrigger(stack, fx.owner, settings));
  fx.otherHook = hook(await createTrigger(stack, fx.other, { flow: 'echo' }));

  before = await storedState(fx);
  // The snapshot must hold something, or "unchanged" would prove nothing.
  expect(Object.keys(before.values).sort()).toEqual(Object.keys(SEEDED_VALUES).sort());
  expect(before.triggers.data.triggers).toHaveLength(Object.keys(TRIGGER_SETTINGS).length);
  expect([before.otherTriggers.data.triggers.length, before.apiKeys.data.api_keys.length, before.otherApiKeys.data.api_keys.length, before.fresh]).toEqual([1, 1, 1, 404]);
  expect(Object.values(await allExecutions(fx)).flat()).toEqual([]);
});

describe('hostile inputs', () => {
  it(`the corpus has at least 200 cases, each named once (it has ${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(200);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  describe.each([
    ['credentials on every authenticated route', credentialCases],
    ['tokens', tokenCases],
    ['JSON bodies', bodyCases],
    ['route by route', routeSpecificCases],
    ['webhook deliveries', webhookCases],
  ] as const)('%s', (_group, cases) => {
    for (const hostile of cases) {
      const run = async () => {
        const req = await hostile.request(fx);
        expectRefusal(await send(req), hostile.status, 'method' in req ? req.method : undefined);
      };
      it(hostile.name, run);
    }
  });
});

describe('after the corpus', () => {
  it('the stack still answers', async () => {
    expect((await call(stack, 'GET', '/health')).json).toEqual({ status: 'ok', backlog: { waiting: 0, oldest_age_seconds: null } });
  });

  it('no flow ran: every delivery the triggers recorded was refused', async () => {
    const executions = await allExecutions(fx);
    for (const [name, list] of Object.entries(executions)) {
      expect((list as { status: string }[]).filter((e) => e.status !== 'refused'), name).toEqual([]);
    }
  });

  it('the stored data is unchanged: bucket, keys, values, triggers and API keys of both accounts', async () => {
    expect(await storedState(fx)).toEqual(before);
  });
});
