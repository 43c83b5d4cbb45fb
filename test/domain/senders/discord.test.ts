/**
 * Discord interactions, proven by Discord's own `discord-interactions` `verifyKey`: the request is
 * signed as that package's own tests sign it (a WebCrypto Ed25519 key pair, the signature over
 * timestamp + body), and both verifiers must agree on every case.
 * https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers
 */
import { webcrypto } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DISCORD_TOLERANCE_SECONDS } from '../../../functions/domain/webhooks/senders/catalog.js';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor, NOW } from '../../support/verify-context.js';

/** The catalog's `discord` row, as the receiver verifies with it. */
const DISCORD = rowOf('discord');
const PING = '{"type":1,"id":"1234","application_id":"5678","version":1,"token":"abc"}';

interface Signer {
  publicKeyHex: string;
  sign(body: string, timestamp: string): Promise<Record<string, string>>;
}

async function discordSigner(): Promise<Signer> {
  const pair = (await webcrypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const raw = Buffer.from(await webcrypto.subtle.exportKey('raw', pair.publicKey));
  return {
    publicKeyHex: raw.toString('hex'),
    async sign(body, timestamp) {
      const signature = await webcrypto.subtle.sign({ name: 'Ed25519' }, pair.privateKey, new TextEncoder().encode(timestamp + body));
      return { 'X-Signature-Ed25519': Buffer.from(signature).toString('hex'), 'X-Signature-Timestamp': timestamp };
    },
  };
}

/** Both verdicts on one request: ours through the catalog row, Discord's through `verifyKey`. */
async function verdicts(body: string, headers: Record<string, string>, publicKeyHex: string, nowSeconds = NOW) {
  const ours = await verifySender(DISCORD, contextFor({ body, headers, secrets: [publicKeyHex], nowSeconds }));
  const theirs = await verifyKey(Buffer.from(body), headers['X-Signature-Ed25519'] ?? '', headers['X-Signature-Timestamp'] ?? '', publicKeyHex);
  return { ours, theirs };
}

describe('discord: Ed25519 as discord-interactions verifies it', () => {
  let signer: Signer;
  let other: Signer;
  beforeAll(async () => {
    signer = await discordSigner();
    other = await discordSigner();
  });

  it('a genuine PING passes both', async () => {
    expect(await verdicts(PING, await signer.sign(PING, String(NOW)), signer.publicKeyHex)).toEqual({ ours: true, theirs: true });
  });

  it('a changed body fails both', async () => {
    expect(await verdicts(PING.replace('1234', '1235'), await signer.sign(PING, String(NOW)), signer.publicKeyHex)).toEqual({ ours: false, theirs: false });
  });

  it('another application\'s key fails both', async () => {
    expect(await verdicts(PING, await signer.sign(PING, String(NOW)), other.publicKeyHex)).toEqual({ ours: false, theirs: false });
  });

  it('a missing signature header fails both', async () => {
    const { 'X-Signature-Timestamp': timestamp } = await signer.sign(PING, String(NOW));
    expect(await verdicts(PING, { 'X-Signature-Timestamp': timestamp! }, signer.publicKeyHex)).toEqual({ ours: false, theirs: false });
  });

  it('a stale timestamp fails ours (Discord\'s library checks no time; the row adds five minutes)', async () => {
    const stale = String(NOW - DISCORD_TOLERANCE_SECONDS - 1);
    expect(await verdicts(PING, await signer.sign(PING, stale), signer.publicKeyHex)).toEqual({ ours: false, theirs: true });
  });

  it("checkSenderSecret accepts the application's public key as Discord shows it (64 hex characters)", () => {
    expect(checkSenderSecret(DISCORD, signer.publicKeyHex)).toBeUndefined();
    expect(checkSenderSecret(DISCORD, signer.publicKeyHex.slice(1))).toMatch(/64 hex characters/);
  });

  it('a key rotation: a signature by either application key passes', async () => {
    const headers = await signer.sign(PING, String(NOW));
    expect(await verifySender(DISCORD, contextFor({ body: PING, headers, secrets: [other.publicKeyHex, signer.publicKeyHex] }))).toBe(true);
  });
});
