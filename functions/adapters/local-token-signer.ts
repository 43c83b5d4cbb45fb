import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { publicSigningKey, type PublicSigningKey, type TokenSigner } from '../domain/accounts/index.js';

/** A new P-256 private key as the local stack keeps it: PKCS #8 DER, base64. */
export function generateLocalSigningKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
}

/**
 * The local stack's stand-in for the KMS signing key: P-256 private keys held by the process
 * (`LOCAL_MFA_SIGNING_KEYS`, kept in the data directory). The first signs; the others are retired
 * keys, listed so that proofs they signed still verify.
 */
export class LocalTokenSigner implements TokenSigner {
  private readonly keys: { privateKey: KeyObject; jwk: PublicSigningKey }[];

  constructor(keysBase64: readonly string[]) {
    if (keysBase64.length === 0) throw new Error('LOCAL_MFA_SIGNING_KEYS must hold at least one key');
    this.keys = keysBase64.map((base64) => {
      const privateKey = createPrivateKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'pkcs8' });
      if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
        throw new Error('LOCAL_MFA_SIGNING_KEYS must be P-256 keys (PKCS #8 DER, base64)');
      }
      const { x, y } = createPublicKey(privateKey).export({ format: 'jwk' });
      return { privateKey, jwk: publicSigningKey({ x: x!, y: y! }) };
    });
  }

  async publicKeys(): Promise<PublicSigningKey[]> {
    return this.keys.map((key) => key.jwk);
  }

  async sign(kid: string, data: Uint8Array): Promise<Uint8Array> {
    const key = this.keys.find((candidate) => candidate.jwk.kid === kid);
    if (!key) throw new Error(`no signing key ${kid}`);
    // JWS wants r || s (RFC 7518 §3.4), not the DER that node gives by default.
    return sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  }
}
