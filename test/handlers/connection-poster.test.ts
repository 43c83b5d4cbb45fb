import { createServer, type IncomingMessage } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { managementPoster } from '../../functions/adapters/aws/connection-poster.js';
import { NodeSha256 } from '../../functions/adapters/aws/node-sha256.js';

/**
 * The receiver's and the listen function's posts to a WebSocket connection (API Gateway's
 * management API), signed by hand: what reaches the endpoint is a SigV4 request for
 * `execute-api` that the SDK's own signer computes the same, and 410 means the connection is gone.
 */
const credentials = { accessKeyId: 'AKIDPOSTERTEST', secretAccessKey: 'secret-of-the-poster-test', sessionToken: 'session-token-of-the-role' };
const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
let answers: number[] = [];
let baseUrl: string;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(answers.shift() ?? 200).end();
  });
});

beforeAll(async () => {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/prod`;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

const post = (attempts?: number) => managementPoster(baseUrl, { region: 'eu-west-1', credentials: async () => credentials, ...(attempts && { attempts }) });

describe('managementPoster', () => {
  it('POSTs the text to @connections/{id} under the stage, signed with SigV4 for execute-api as the SDK signs it', async () => {
    seen.length = 0;
    answers = [200];
    expect(await post()('Ab3=xY', '{"type":"delivery"}')).toBe(true);
    const [request] = seen;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/prod/@connections/Ab3%3DxY');
    expect(request!.body).toBe('{"type":"delivery"}');
    expect(request!.headers['x-amz-security-token']).toBe(credentials.sessionToken);
    const authorization = String(request!.headers.authorization);
    expect(authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDPOSTERTEST\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/);
    // The same request signed again by the SDK's signer, at the same instant, gives the same signature.
    const date = String(request!.headers['x-amz-date']);
    const at = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
    const url = new URL(`${baseUrl}/@connections/Ab3%3DxY`);
    const again = await new SignatureV4({ credentials, region: 'eu-west-1', service: 'execute-api', sha256: NodeSha256 }).sign(
      // The path as sent, percent-encoded, as the SDK's client hands it to its signer (which encodes it once more, as AWS does).
      { method: 'POST', protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: '/prod/@connections/Ab3%3DxY', headers: { host: url.host, 'content-type': 'application/octet-stream' }, body: Buffer.from(request!.body), query: {} },
      { signingDate: at },
    );
    expect(again.headers.authorization).toBe(authorization);
  });

  it("signs for the region the callback URL names when none is given (the stack's output, https://{api-id}.execute-api.{region}.amazonaws.com/{stage})", async () => {
    seen.length = 0;
    answers = [200];
    // The request goes to the test's server; only the signing region comes from the name.
    const poster = managementPoster('https://abc123.execute-api.ap-south-2.amazonaws.com/prod', { credentials: async () => credentials });
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((url: URL, init: RequestInit) => realFetch(new URL(`${url.pathname}`, baseUrl.replace(/\/prod$/, '')), init)) as typeof fetch;
    try {
      expect(await poster('c1', 'x')).toBe(true);
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(String(seen[0]!.headers.authorization)).toContain('/ap-south-2/execute-api/aws4_request');
    expect(() => managementPoster('http://127.0.0.1:1/prod', { credentials: async () => credentials })).toThrow(/no region given/);
  });

  it('answers false when API Gateway no longer has the connection (410 Gone)', async () => {
    answers = [410];
    expect(await post()('gone', 'x')).toBe(false);
  });

  it('tries again when throttled or failed (429, 5xx), and fails after its attempts', async () => {
    seen.length = 0;
    answers = [429, 500, 200];
    expect(await post(3)('busy', 'x')).toBe(true);
    expect(seen).toHaveLength(3);
    seen.length = 0;
    answers = [503, 503];
    await expect(post(2)('down', 'x')).rejects.toThrow(/answered 503/);
    expect(seen).toHaveLength(2);
  });

  it('does not try again a refusal of the request itself (403)', async () => {
    seen.length = 0;
    answers = [403];
    await expect(post()('refused', 'x')).rejects.toThrow(/answered 403/);
    expect(seen).toHaveLength(1);
  });
});
