import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiGatewayEvent } from '../../bench/support/api-gateway-events.js';
import { bundleSize, filesLoadedAtInit } from '../../bench/support/bundle-files.js';
import { DynamoTriggerStore } from '../../functions/adapters/aws/dynamo-trigger-store.js';
import { LocalSecretBox } from '../../functions/adapters/local-secret-box.js';
import { createTrigger } from '../../functions/domain/triggers/manage-triggers.js';
import { FUNCTIONS, type FunctionName } from '../../functions/manifest.js';
import { generateLocalSigningKey } from '../../functions/adapters/local-token-signer.js';
import { LOCAL_AWS_ENV } from '../../local/engines.js';
import { mintLocalToken } from '../../local/token.js';
import { invokeBundled } from '../support/bundled-function.js';
import { cdkSynthOutput, type SynthOutput } from '../support/cdk-synth-output.js';
import { useEngines } from '../support/engines.js';
import { totpCodeAt } from '../support/totp.js';

/**
 * The deployed bundles resolve AWS credentials from the environment only, as Lambda provides them
 * (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`): lib/constructs/esm-bundle.ts
 * replaces the SDK's default chain. Each function here is the bundle the run's one `cdk synth` made
 * (test/support/cdk-synth-output.ts), run in a fresh Node.js process whose environment is exactly what is given, against the embedded
 * engines; an HTTP relay in front of DynamoDB records how each request was signed.
 */
const ROLE = { AWS_ACCESS_KEY_ID: 'ASIAROLECREDENTIALS1', AWS_SECRET_ACCESS_KEY: randomBytes(30).toString('base64'), AWS_SESSION_TOKEN: `role-session-${randomBytes(8).toString('hex')}` };
const JWT_SECRET = randomBytes(32).toString('base64url');
const KMS_KEY = 'arn:aws:kms:us-east-1:000000000000:key/00000000-0000-0000-0000-000000000000';

const engines = useEngines();
let home: string;
let bundles: Record<string, string>;
let relay: { url: string; seen: IncomingHttpHeaders[]; server: Server };
let imds: { url: string; hits: string[]; server: Server };

const listen = async (server: Server) => {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
};

/** Forwards every request to `target` and keeps its headers. */
async function startRelay(target: string) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const upstream = request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  return { url: await listen(server), seen, server };
}

/** Stands in for the EC2 instance metadata service, which the SDK's default chain ends with. */
async function startImds() {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(404).end();
  });
  return { url: await listen(server), hits, server };
}

/** Runs a bundle in a new `node` with only `env` (plus PATH); whatever it logs comes back as `logs`. */
const invoke = async (fn: FunctionName, event: unknown, env: Record<string, string>) => invokeBundled(bundles[fn]!, event, env);

/**
 * Region, tables and endpoints as the stack and the engines give them, and nothing from the
 * developer's machine: no profile, an empty home, the fake metadata service.
 */
function functionEnv(extra: Record<string, string>): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: 'WARN',
    HOME: home,
    AWS_CONFIG_FILE: join(home, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
    AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.url,
    AUTH_TABLE: engines.engines.env.AUTH_TABLE!,
    TRIGGERS_TABLE: engines.engines.env.TRIGGERS_TABLE!,
    EXECUTIONS_TABLE: engines.engines.env.EXECUTIONS_TABLE!,
    FLOW_QUEUE_URL: engines.engines.env.FLOW_QUEUE_URL!,
    FLOW_STATE_MACHINE_ARN_PREFIX: engines.engines.env.FLOW_STATE_MACHINE_ARN_PREFIX!,
    WEBHOOK_BASE_URL: 'https://api.example.com/webhooks',
    AWS_ENDPOINT_URL_DYNAMODB: relay.url,
    AWS_ENDPOINT_URL_SQS: engines.engines.env.AWS_ENDPOINT_URL_SQS!,
    AWS_ENDPOINT_URL_SFN: engines.engines.env.AWS_ENDPOINT_URL_SFN!,
    AUTH_JWT_SECRET: JWT_SECRET,
    SECRETS_KMS_KEY_ID: KMS_KEY,
    ...extra,
  };
}

const createApiKey = async () =>
  apiGatewayEvent({ method: 'POST', routeKey: 'POST /api-keys', rawPath: '/api-keys', headers: { authorization: `Bearer ${await mintLocalToken({ secret: JWT_SECRET, sub: 'bundle-user' })}`, 'content-type': 'application/json' }, body: '{}' });

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'flowgate-empty-home-'));
  const names = Object.keys(FUNCTIONS) as FunctionName[];
  let synthesized: SynthOutput;
  [synthesized, relay, imds] = await Promise.all([
    cdkSynthOutput(),
    startRelay(engines.engines.env.AWS_ENDPOINT_URL_DYNAMODB!),
    startImds(),
  ]);
  bundles = Object.fromEntries(names.map((name) => [name, synthesized.bundleOfFunction(name)]));
}, 330_000);

afterAll(async () => {
  for (const server of [relay?.server, imds?.server]) await new Promise((done) => (server ? server.close(done) : done(undefined)));
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a bundled function, with only the credentials Lambda puts in its environment', () => {
  it('signs its calls with the role credentials from the environment, session token included', async () => {
    relay.seen.length = 0;
    const { result } = await invoke('apiKeys', await createApiKey(), functionEnv(ROLE));
    expect(result.statusCode, JSON.stringify(result)).toBe(201);
    expect(JSON.parse(result.body).data.api_key).toMatch(/\S{20,}/);
    expect(relay.seen.length).toBeGreaterThan(0);
    for (const headers of relay.seen) {
      expect(headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${ROLE.AWS_ACCESS_KEY_ID}/\\d{8}/us-east-1/dynamodb/aws4_request`));
      expect(headers['x-amz-security-token']).toBe(ROLE.AWS_SESSION_TOKEN);
    }
    expect(imds.hits).toEqual([]);
  });

  it('without credentials in the environment, fails at once with a credentials error and looks nowhere else', async () => {
    relay.seen.length = 0;
    imds.hits.length = 0;
    const { result, logs } = await invoke('apiKeys', await createApiKey(), functionEnv({}));
    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body)).toEqual({ error: 'internal_error' });
    expect(logs).toContain('CredentialsProviderError');
    expect(logs).toContain('Unable to find environment variable credentials');
    // The SDK's default chain would have gone on to files, SSO and this metadata service.
    expect(imds.hits).toEqual([]);
    expect(relay.seen).toEqual([]);
  });

  it('runs a wait-mode flow through the Step Functions client it loads on first use', async () => {
    const store = new DynamoTriggerStore(engines.dynamo, engines.engines.env.TRIGGERS_TABLE!, Date.now);
    const deps = { store, secretBox: new LocalSecretBox(randomBytes(32).toString('base64')), randomBytes, now: Date.now };
    const { record } = await createTrigger(deps, 'bundle-account', { flow: 'echo', response_mode: 'wait', event_filter: [], api_key_enabled: false, signature: null, allowed_source_ips: null, enabled: true, deduplicate: false, acknowledge_response: null });
    const body = JSON.stringify({ type: 'order.paid', id: 'evt_bundle' });
    const event = apiGatewayEvent({
      method: 'POST',
      routeKey: 'ANY /webhooks/{webhook_id}',
      rawPath: `/webhooks/${record.webhook_id}`,
      pathParameters: { webhook_id: record.webhook_id },
      headers: { 'content-type': 'application/json' },
      body,
    });
    const { result } = await invoke('webhook', event, functionEnv(ROLE));
    expect(result.statusCode, JSON.stringify(result)).toBe(200);
    // flows/echo.asl.json answers with what it received.
    expect(JSON.parse(result.body)).toMatchObject({ webhook_id: record.webhook_id, event_id: 'evt_bundle' });
  });

  it('acknowledges a delivery by queueing it with the SQS client it starts loading as the request begins', async () => {
    const store = new DynamoTriggerStore(engines.dynamo, engines.engines.env.TRIGGERS_TABLE!, Date.now);
    const deps = { store, secretBox: new LocalSecretBox(randomBytes(32).toString('base64')), randomBytes, now: Date.now };
    const { record } = await createTrigger(deps, 'bundle-account', { flow: 'echo', response_mode: 'acknowledge', event_filter: [], api_key_enabled: false, signature: null, allowed_source_ips: null, enabled: true, deduplicate: false, acknowledge_response: null });
    const eventId = `evt_bundle_ack_${randomBytes(4).toString('hex')}`;
    const event = apiGatewayEvent({
      method: 'POST',
      routeKey: 'ANY /webhooks/{webhook_id}',
      rawPath: `/webhooks/${record.webhook_id}`,
      pathParameters: { webhook_id: record.webhook_id },
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'order.paid', id: eventId }),
    });
    const { result } = await invoke('webhook', event, functionEnv(ROLE));
    expect(result.statusCode, JSON.stringify(result)).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({ status: 'accepted' });
    // What the flow worker will receive: the delivery, on the flow queue.
    const queued: string[] = [];
    for (let round = 0; round < 10 && !queued.some((body) => body.includes(eventId)); round++) {
      const { Messages = [] } = await engines.sqs.send(new ReceiveMessageCommand({ QueueUrl: engines.engines.env.FLOW_QUEUE_URL!, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
      queued.push(...Messages.map((message) => message.Body ?? ''));
    }
    expect(queued.some((body) => body.includes(eventId))).toBe(true);
  });
});

describe('what the webhook bundle loads at init', () => {
  const initCode = () => filesLoadedAtInit(bundles.webhook!).then((files) => files.map((file) => readFileSync(file, 'utf8')).join('\n'));
  const assetCode = () => readdirSync(dirname(bundles.webhook!)).map((file) => readFileSync(resolve(dirname(bundles.webhook!), file), 'utf8')).join('\n');

  it('leaves the Step Functions, KMS and SQS clients and the multipart parser to chunks loaded on first use', async () => {
    const init = await initCode();
    const asset = assetCode();
    // Step Functions' operation, KMS's and SQS's service names on the wire, one of busboy's errors.
    for (const marker of ['StartSyncExecution', 'TrentService', 'AmazonSQS', 'Unexpected end of form']) {
      expect(asset.includes(marker), `${marker} in the asset`).toBe(true);
      expect(init.includes(marker), `${marker} loaded at init`).toBe(false);
    }
  });

  it('leaves the sender catalog, the handshakes and the primitives but HMAC to the first delivery that needs them (300 KB at init)', async () => {
    const init = await initCode();
    const asset = assetCode();
    // One of jose's error codes; the X.509 primitive's SNS message type; a catalog id; Zoom's handshake event.
    for (const marker of ['ERR_JWT_CLAIM_VALIDATION_FAILED', 'SubscriptionConfirmation', 'coinbase_commerce', 'endpoint.url_validation']) {
      expect(asset.includes(marker), `${marker} in the asset`).toBe(true);
      expect(init.includes(marker), `${marker} loaded at init`).toBe(false);
    }
  });

  it('holds none of the default credential chain', () => {
    // Names from @aws-sdk/credential-provider-node and the providers it chains.
    const asset = assetCode();
    for (const marker of ['fromInstanceMetadata', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'sso_start_url']) {
      expect(asset.includes(marker), `${marker} in the asset`).toBe(false);
    }
  });
});

describe('what other bundles leave to first use', () => {
  const filesOf = (fn: FunctionName) => readdirSync(dirname(bundles[fn]!)).map((file) => resolve(dirname(bundles[fn]!), file));
  const codeOf = (files: string[]) => files.map((file) => readFileSync(file, 'utf8')).join('\n');
  const loaded = async (fn: FunctionName) => ({ init: codeOf(await filesLoadedAtInit(bundles[fn]!)), asset: codeOf(filesOf(fn).filter((f) => f.endsWith('.mjs'))) });
  // One of jose's error codes; zod's error class name; a string of the OpenAPI document.
  const JOSE = 'ERR_JWT_CLAIM_VALIDATION_FAILED';
  const ZOD = '$ZodError';
  const OPENAPI = 'Flowgate gateway and flow webhook triggers';

  it('system: zod and the OpenAPI document load with the first request for /openapi.json, which gets them', async () => {
    const { init, asset } = await loaded('system');
    for (const marker of [ZOD, OPENAPI]) {
      expect(asset.includes(marker), `${marker} in the asset`).toBe(true);
      expect(init.includes(marker), `${marker} loaded at init`).toBe(false);
    }
    const { result } = await invoke('system', apiGatewayEvent({ method: 'GET', routeKey: 'GET /openapi.json', rawPath: '/openapi.json', headers: {} }), functionEnv(ROLE));
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body).info.title).toBe(OPENAPI);
  });

  it("system: the API reference's files (Scalar's bundle) lie beside the code and are read by the first GET /docs, never at init", async () => {
    const { init } = await loaded('system');
    expect(init.includes('createApiReference')).toBe(false);
    expect(filesOf('system').some((file) => file.endsWith('/api-reference-files.json'))).toBe(true);
    const page = (await invoke('system', apiGatewayEvent({ method: 'GET', routeKey: 'GET /docs', rawPath: '/docs', headers: {} }), functionEnv(ROLE))).result;
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    // The page names the bundle's files (the 4.3 MB script itself is too large to pass back from the child process here).
    const files = JSON.parse(readFileSync(filesOf('system').find((file) => file.endsWith('/api-reference-files.json'))!, 'utf8')) as { assets: Record<string, { body: string }> };
    const asset = /\/docs\/(scalar\.[\w-]+\.js)/.exec(page.body)![1]!;
    expect(files.assets[asset]?.body).toContain('createApiReference');
  });

  it('the idempotency step (its store and crypto) loads with the first request that sends a key; a bundled retry is replayed', async () => {
    for (const fn of ['apiKeys', 'objects', 'streams', 'triggers'] as const) {
      if (!bundles[fn]) continue;
      const { init, asset } = await loaded(fn);
      expect(asset.includes('IDEMPOTENCY#'), `the idempotency store in the ${fn} asset`).toBe(true);
      expect(init.includes('IDEMPOTENCY#'), `the idempotency store loaded at ${fn}'s init`).toBe(false);
    }
    const event = await createApiKey();
    event.headers['idempotency-key'] = `bundle-${Date.now()}`;
    const first = (await invoke('apiKeys', event, functionEnv(ROLE))).result;
    const again = (await invoke('apiKeys', event, functionEnv(ROLE))).result;
    expect(first.statusCode, JSON.stringify(first)).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(again.body).data.api_key).toBe(JSON.parse(first.body).data.api_key);
  });

  it('gateway routes load jose with the first bearer token, and triggers its request schemas with the first body', async () => {
    for (const fn of ['apiKeys', 'triggers'] as const) {
      const { init, asset } = await loaded(fn);
      expect(asset.includes(JOSE), `jose in the ${fn} asset`).toBe(true);
      expect(init.includes(JOSE), `jose loaded at ${fn}'s init`).toBe(false);
    }
    const triggers = await loaded('triggers');
    expect(triggers.asset.includes(ZOD)).toBe(true);
    expect(triggers.init.includes(ZOD)).toBe(false);
  });

  it('accounts, which also serves the JWKS and admin routes (no token), loads jose with the first token or proof checked', async () => {
    const { init, asset } = await loaded('accounts');
    expect(asset.includes(JOSE)).toBe(true);
    expect(init.includes(JOSE)).toBe(false);
  });

  // One of otplib's errors; one of @noble/hashes' (the HMAC-SHA-1 otplib computes codes with).
  const OTPLIB = 'Crypto plugin is required.';
  const NOBLE_HASHES = 'expected hash wrapped by utils.createHasher';

  it('accounts: otplib and its hashes load with the first TOTP code checked; a registration started and confirmed in two fresh processes succeeds', async () => {
    const { init, asset } = await loaded('accounts');
    for (const marker of [OTPLIB, NOBLE_HASHES]) {
      expect(asset.includes(marker), `${marker} in the asset`).toBe(true);
      expect(init.includes(marker), `${marker} loaded at init`).toBe(false);
    }
    // No KMS engine here: the secret is sealed with a process-held key, as on the local stack.
    const { SECRETS_KMS_KEY_ID: _kms, ...env } = functionEnv({
      ...ROLE, ACCOUNTS_TABLE: engines.engines.env.ACCOUNTS_TABLE!, LOCAL_SECRETS_KEY: randomBytes(32).toString('base64'),
      LOCAL_MFA_SIGNING_KEYS: generateLocalSigningKey(), MFA_TOKEN_ISSUER: 'http://gateway.test',
    });
    const authorization = `Bearer ${await mintLocalToken({ secret: JWT_SECRET, sub: `bundle-totp-${randomBytes(4).toString('hex')}` })}`;
    const post = (path: string, body: unknown) =>
      apiGatewayEvent({ method: 'POST', routeKey: `POST /accounts/${path}`, rawPath: `/accounts/${path}`, headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const started = await invoke('accounts', post('totp-registration', {}), env);
    expect(started.result.statusCode, JSON.stringify(started.result)).toBe(200);
    const { secret } = JSON.parse(started.result.body).data as { secret: string };
    // A process whose first request checks a code, so it loads otplib's chunk then.
    const confirmed = await invoke('accounts', post('confirm-totp-registration', { secret, code: totpCodeAt(secret, Date.now()) }), env);
    expect(confirmed.result.statusCode, JSON.stringify(confirmed.result)).toBe(200);
    expect(JSON.parse(confirmed.result.body).data.recovery_codes).toHaveLength(10);
  });

  it('objects: the S3 client and its presigner load with the first request that touches bytes (300 KB at init); a fresh process writes and reads an object', async () => {
    const { init, asset } = await loaded('objects');
    // S3's signing name and one of its request shapes (the presigner is in the same chunk).
    for (const marker of ['AmazonS3', 'PutObjectRequest']) {
      expect(asset.includes(marker), `${marker} in the asset`).toBe(true);
      expect(init.includes(marker), `${marker} loaded at init`).toBe(false);
    }
    expect((await bundleSize(bundles.objects!)).initBytes).toBeLessThanOrEqual(300_000);
    // s3rver checks signatures against its own key pairs: the local stack's credentials are one.
    const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY } = LOCAL_AWS_ENV;
    const env = functionEnv({
      AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, KV_TABLE: engines.engines.env.KV_TABLE!, OBJECTS_BUCKET: engines.engines.env.OBJECTS_BUCKET!, KV_SWEEP_QUEUE_URL: engines.engines.env.KV_SWEEP_QUEUE_URL!,
      AWS_ENDPOINT_URL_S3: engines.engines.env.AWS_ENDPOINT_URL_S3!, AWS_ENDPOINT_URL_DYNAMODB: engines.engines.env.AWS_ENDPOINT_URL_DYNAMODB!,
    });
    const authorization = `Bearer ${await mintLocalToken({ secret: JWT_SECRET, sub: `bundle-objects-${randomBytes(4).toString('hex')}` })}`;
    const event = (method: string, route: string, path: string, pathParameters: Record<string, string>, body?: string) =>
      apiGatewayEvent({ method, routeKey: `${method} /storage/objects/${route}`, rawPath: `/storage/objects/${path}`, pathParameters, headers: { authorization, 'content-type': 'text/plain' }, body });
    const store = { store: 'bundle' };
    expect((await invoke('objects', event('PUT', '{store}', 'bundle', store), env)).result.statusCode).toBe(201);
    const key = { ...store, key: 'a.txt' };
    expect((await invoke('objects', event('PUT', '{store}/objects/{key+}', 'bundle/objects/a.txt', key, 'hello'), env)).result.statusCode).toBe(200);
    const read = await invoke('objects', event('GET', '{store}/objects/{key+}', 'bundle/objects/a.txt', key), env);
    expect(read.result.statusCode).toBe(200);
    expect(Buffer.from(read.result.body, 'base64').toString()).toBe('hello');
  });

  it("kvSweeper: the S3 client and the objects catalog load with the first object store's task, the SQS client as a task begins (300 KB at init)", async () => {
    const { init, asset } = await loaded('kvSweeper');
    for (const marker of ['AmazonS3', 'OBJSTORES#', 'AmazonSQS']) {
      expect(asset.includes(marker), `${marker} in the asset`).toBe(true);
      expect(init.includes(marker), `${marker} loaded at init`).toBe(false);
    }
    expect((await bundleSize(bundles.kvSweeper!)).initBytes).toBeLessThanOrEqual(300_000);
  });

  it('every function loads at most 300 KB at init (the cold-start budget), whatever it loads on first use', async () => {
    // esbuild's code splitting puts a module shared by init code and a lazily loaded client into a
    // chunk loaded at init: the receiver's lazy WebSocket push once took it to 301,847 bytes this way.
    const sizes = Object.fromEntries(await Promise.all(Object.keys(FUNCTIONS).map(async (name) => [name, (await bundleSize(bundles[name]!)).initBytes] as const)));
    const over = Object.entries(sizes).filter(([, bytes]) => bytes > 300_000);
    expect(over, JSON.stringify(sizes)).toEqual([]);
  });

  it('every function loads two files at init, index.mjs and one chunk, however many modules it shares with what it loads on first use', async () => {
    // esbuild alone split the receiver's init into 22 files (lib/constructs/esm-chunks.ts).
    const files = Object.fromEntries(await Promise.all(Object.keys(FUNCTIONS).map(async (name) => [name, (await bundleSize(bundles[name]!)).initFiles] as const)));
    expect(Object.entries(files).filter(([, count]) => count > 2), JSON.stringify(files)).toEqual([]);
  });

  it('every file of every bundle links: each chunk imports only names its modules export, as loading it on first use needs', () => {
    // The chunking (lib/constructs/esm-chunks.ts) rewrites what chunks import and re-export; a name
    // it lost would only fail when a deployed function first loads that chunk. The files are linked
    // without running (test/support/link-modules.mjs), so no function's init runs here.
    // One process for every function: each bundle is a folder of its own, and modules are kept by path.
    const functionOf = new Map<string, FunctionName>();
    for (const fn of Object.keys(FUNCTIONS) as FunctionName[]) {
      const files = filesOf(fn).filter((file) => file.endsWith('.mjs'));
      expect(files.length, fn).toBeGreaterThanOrEqual(2);
      for (const file of files) functionOf.set(file, fn);
    }
    const out = execFileSync(process.execPath, ['--experimental-vm-modules', '--no-warnings', resolve('test/support/link-modules.mjs'), ...functionOf.keys()], { encoding: 'utf8' });
    const failures = (JSON.parse(out) as { file: string; error: string }[]).map((failure) => `${functionOf.get(failure.file)}: ${failure.file}: ${failure.error}`);
    expect(failures).toEqual([]);
  });

  it("objects and kvSweeper: the S3 client's XML protocol and checksum streams, reached at init only through the SDK's barrel files, load with the S3 client", async () => {
    // An error of the XML protocol's serializer, one of the checksum stream's, a class of the XML builder.
    for (const fn of ['objects', 'kvSweeper'] as const) {
      const { init, asset } = await loaded(fn);
      for (const marker of ['xml serializer, cannot write non-member map', 'unable to instantiate ChecksumStream', 'XmlNode']) {
        expect(asset.includes(marker), `${fn}: ${marker} in the asset`).toBe(true);
        expect(init.includes(marker), `${fn}: ${marker} loaded at init`).toBe(false);
      }
    }
  });
});
