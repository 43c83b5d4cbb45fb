import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KmsTokenSigner, RETRY_UNREADABLE_KEY_MS } from '../../functions/adapters/aws/kms-token-signer.js';
import { isFreshMfaToken, issueMfaToken } from '../../functions/domain/accounts/mfa-token.js';

/**
 * The deployed signer against KMS's JSON protocol (`TrentService.GetPublicKey`, `TrentService.Sign`)
 * as the SDK speaks it, served on 127.0.0.1 by P-256 keys held here: no KMS engine runs locally.
 * A key is `ok`, or refused as KMS refuses a key pending deletion (`KMSInvalidStateException`):
 * what a retired key becomes once someone schedules its deletion too early.
 */
type KeyState = 'ok' | 'pending_deletion';
const keys = new Map<string, { privateKey: KeyObject; spki: Buffer; state: KeyState }>();
const calls: { target: string; keyId: string }[] = [];
let server: Server;
let kms: KMSClient;

const arn = (name: string) => `arn:aws:kms:us-east-1:111122223333:key/${name}`;
function addKey(name: string, state: KeyState = 'ok'): string {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  keys.set(arn(name), { privateKey, spki: publicKey.export({ format: 'der', type: 'spki' }), state });
  return arn(name);
}

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const target = String(request.headers['x-amz-target']).replace('TrentService.', '');
      const input = JSON.parse(body) as { KeyId: string; Message?: string };
      calls.push({ target, keyId: input.KeyId });
      const key = keys.get(input.KeyId);
      const answer = (status: number, value: unknown) => {
        response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        response.end(JSON.stringify(value));
      };
      if (!key) return answer(400, { __type: 'NotFoundException', message: `Key '${input.KeyId}' does not exist` });
      if (key.state === 'pending_deletion') return answer(400, { __type: 'KMSInvalidStateException', message: `${input.KeyId} is pending deletion.` });
      if (target === 'GetPublicKey') {
        return answer(200, { KeyId: input.KeyId, KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', PublicKey: key.spki.toString('base64'), SigningAlgorithms: ['ECDSA_SHA_256'] });
      }
      const signature = sign('sha256', Buffer.from(input.Message!, 'base64'), key.privateKey);
      return answer(200, { KeyId: input.KeyId, Signature: signature.toString('base64'), SigningAlgorithm: 'ECDSA_SHA_256' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  kms = new KMSClient({
    region: 'us-east-1', endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1,
  });
});

afterAll(async () => {
  kms?.destroy();
  await new Promise((resolve) => server?.close(resolve));
});

const issue = (signer: KmsTokenSigner) => issueMfaToken(signer, { issuer: 'https://api.example.com', audience: 'app-1', subject: 'u1', accountId: 'a1', method: 'otp', purpose: 'sign_in', jti: randomUUID(), nowMs: Date.now() });
const verifies = async (signer: KmsTokenSigner, token: string) =>
  isFreshMfaToken(token, { keys: await signer.publicKeys(), issuer: 'https://api.example.com', audience: 'app-1', subject: 'u1', nowMs: Date.now() });

describe('KmsTokenSigner: each key loads on its own', () => {
  it('a retired key KMS refuses (pending deletion) is left out of the JWKS; the current key still signs, and its proofs verify', async () => {
    const current = addKey('current-a');
    const gone = addKey('retired-gone', 'pending_deletion');
    const signer = new KmsTokenSigner(kms, [current, gone]);
    const listed = await signer.publicKeys();
    expect(listed).toHaveLength(1);
    const { token } = await issue(signer);
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid).toBe(listed[0]!.kid);
    expect(await verifies(signer, token)).toBe(true);
  });

  it('the keys that load are all listed, the current one first, so proofs of a readable retired key still verify', async () => {
    const old = addKey('retired-ok');
    const oldSigner = new KmsTokenSigner(kms, [old]);
    const { token: oldProof } = await issue(oldSigner);

    const rotated = new KmsTokenSigner(kms, [addKey('current-b'), old, addKey('retired-gone-2', 'pending_deletion')]);
    const listed = await rotated.publicKeys();
    expect(listed.map((key) => key.kid)).toEqual([(await new KmsTokenSigner(kms, [arn('current-b')]).publicKeys())[0]!.kid, (await oldSigner.publicKeys())[0]!.kid]);
    expect(await verifies(rotated, oldProof)).toBe(true);
    // The new proofs are the current key's.
    const { token } = await issue(rotated);
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid).toBe(listed[0]!.kid);
  });

  it(`an unreadable retired key is tried again after ${RETRY_UNREADABLE_KEY_MS / 1000} s, not at every request`, async () => {
    const flaky = addKey('retired-flaky', 'pending_deletion');
    let now = 1_000_000;
    const signer = new KmsTokenSigner(kms, [addKey('current-c'), flaky], () => now);
    expect(await signer.publicKeys()).toHaveLength(1);
    const tries = () => calls.filter((call) => call.keyId === flaky).length;
    const before = tries();
    keys.get(flaky)!.state = 'ok';
    now += RETRY_UNREADABLE_KEY_MS - 1;
    expect(await signer.publicKeys()).toHaveLength(1);
    expect(tries()).toBe(before);
    now += 1;
    expect(await signer.publicKeys()).toHaveLength(2);
    expect(tries()).toBe(before + 1);
  });

  it('only the current key signs: a retired kid is refused, and with the current key unreadable no proof is issued (the retired ones are still listed)', async () => {
    const current = addKey('current-d');
    const old = addKey('retired-d');
    const signer = new KmsTokenSigner(kms, [current, old]);
    const [, retired] = await signer.publicKeys();
    await expect(signer.sign(retired!.kid, Buffer.from('x'))).rejects.toThrow(/only the current key signs/);

    const broken = addKey('current-broken', 'pending_deletion');
    const withoutCurrent = new KmsTokenSigner(kms, [broken, old]);
    expect((await withoutCurrent.publicKeys()).map((key) => key.kid)).toEqual([retired!.kid]);
    await expect(issue(withoutCurrent)).rejects.toThrow(/pending deletion/);
    expect(calls.filter((call) => call.target === 'Sign' && call.keyId === old)).toEqual([]);
  });
});
