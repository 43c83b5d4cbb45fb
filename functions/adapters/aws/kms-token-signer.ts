import { GetPublicKeyCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { createPublicKey } from 'node:crypto';
import { publicSigningKey, type PublicSigningKey, type TokenSigner } from '../../domain/accounts/index.js';
import { derToJoseSignature } from './ecdsa-signature.js';

/** How long a key whose public key could not be read is left out before it is tried again. */
export const RETRY_UNREADABLE_KEY_MS = 60_000;

interface LoadedKey {
  keyId: string;
  jwk: PublicSigningKey;
}

/**
 * Signs step-up proofs with asymmetric KMS keys (`ECC_NIST_P256`, `SIGN_VERIFY`): the private key
 * never leaves KMS. `keyIds[0]` signs; the others are retired keys, listed until their proofs
 * expire. Public keys never change for a key id, so each is fetched once per execution environment.
 *
 * Each key loads on its own: a retired key that cannot be read (scheduled for deletion, disabled,
 * its grant gone) is left out of the JWKS and tried again after {@link RETRY_UNREADABLE_KEY_MS},
 * and the others are served; the signing key is tried again at every call. Only the signing key
 * signs, whatever `kid` is asked for.
 */
export class KmsTokenSigner implements TokenSigner {
  private readonly loads: (() => Promise<LoadedKey>)[];

  constructor(private readonly kms: KMSClient, keyIds: readonly string[], now: () => number = Date.now) {
    if (keyIds.length === 0) throw new Error('the KMS token signer needs a key');
    this.loads = keyIds.map((keyId, index) => {
      const retryAfterMs = index === 0 ? 0 : RETRY_UNREADABLE_KEY_MS;
      let loaded: Promise<LoadedKey> | undefined;
      let failedAt = -Infinity;
      return () => {
        if (!loaded && now() - failedAt >= retryAfterMs) {
          loaded = this.publicKey(keyId).then((jwk) => ({ keyId, jwk }));
          loaded.catch(() => {
            loaded = undefined;
            failedAt = now();
          });
        }
        return loaded ?? Promise.reject(new Error(`KMS key ${keyId} could not be read; tried again after ${retryAfterMs / 1000} s`));
      };
    });
  }

  private async publicKey(keyId: string): Promise<PublicSigningKey> {
    const { PublicKey, KeySpec } = await this.kms.send(new GetPublicKeyCommand({ KeyId: keyId }));
    if (KeySpec !== 'ECC_NIST_P256' || !PublicKey) throw new Error(`KMS key ${keyId} is not an ECC_NIST_P256 key`);
    const { x, y } = createPublicKey({ key: Buffer.from(PublicKey), format: 'der', type: 'spki' }).export({ format: 'jwk' });
    return publicSigningKey({ x: x!, y: y! });
  }

  /** The keys that load, the signing key first when it does. */
  async publicKeys(): Promise<PublicSigningKey[]> {
    const outcomes = await Promise.allSettled(this.loads.map((load) => load()));
    return outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.jwk] : []));
  }

  async sign(kid: string, data: Uint8Array): Promise<Uint8Array> {
    const current = await this.loads[0]!();
    if (current.jwk.kid !== kid) throw new Error(`no signing key ${kid}: only the current key signs`);
    const { Signature } = await this.kms.send(new SignCommand({ KeyId: current.keyId, Message: data, MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' }));
    return derToJoseSignature(Signature!);
  }
}
