import { GetPublicKeyCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { createPublicKey } from 'node:crypto';
import { publicSigningKey, type PublicSigningKey, type TokenSigner } from '../../domain/accounts/index.js';
import { onFirstUse } from '../lazy.js';
import { derToJoseSignature } from './ecdsa-signature.js';

/**
 * Signs step-up proofs with asymmetric KMS keys (`ECC_NIST_P256`, `SIGN_VERIFY`): the private key
 * never leaves KMS. `keyIds[0]` signs; the others are retired keys, listed until their proofs
 * expire. Public keys never change for a key id, so each is fetched once per execution environment.
 */
export class KmsTokenSigner implements TokenSigner {
  private readonly keys: () => Promise<{ keyId: string; jwk: PublicSigningKey }[]>;

  constructor(private readonly kms: KMSClient, keyIds: readonly string[]) {
    if (keyIds.length === 0) throw new Error('the KMS token signer needs a key');
    this.keys = onFirstUse(() => Promise.all(keyIds.map(async (keyId) => ({ keyId, jwk: await this.publicKey(keyId) }))));
  }

  private async publicKey(keyId: string): Promise<PublicSigningKey> {
    const { PublicKey, KeySpec } = await this.kms.send(new GetPublicKeyCommand({ KeyId: keyId }));
    if (KeySpec !== 'ECC_NIST_P256' || !PublicKey) throw new Error(`KMS key ${keyId} is not an ECC_NIST_P256 key`);
    const { x, y } = createPublicKey({ key: Buffer.from(PublicKey), format: 'der', type: 'spki' }).export({ format: 'jwk' });
    return publicSigningKey({ x: x!, y: y! });
  }

  async publicKeys(): Promise<PublicSigningKey[]> {
    return (await this.keys()).map((key) => key.jwk);
  }

  async sign(kid: string, data: Uint8Array): Promise<Uint8Array> {
    const key = (await this.keys()).find((candidate) => candidate.jwk.kid === kid);
    if (!key) throw new Error(`no signing key ${kid}`);
    const { Signature } = await this.kms.send(new SignCommand({ KeyId: key.keyId, Message: data, MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' }));
    return derToJoseSignature(Signature!);
  }
}
