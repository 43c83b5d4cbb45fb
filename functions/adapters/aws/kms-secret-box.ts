import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import type { SecretBox } from '../../domain/secret-box.js';

const PREFIX = 'kms:';

/** Seals with AWS KMS directly (secrets are far under KMS's 4 KB limit), with an encryption context. */
export class KmsSecretBox implements SecretBox {
  constructor(private readonly kms: KMSClient, private readonly keyId: string) {}

  async seal(plaintext: string, context: Record<string, string>): Promise<string> {
    const { CiphertextBlob } = await this.kms.send(new EncryptCommand({ KeyId: this.keyId, Plaintext: Buffer.from(plaintext, 'utf8'), EncryptionContext: context }));
    return PREFIX + Buffer.from(CiphertextBlob!).toString('base64');
  }

  async open(sealed: string, context: Record<string, string>): Promise<string> {
    if (!sealed.startsWith(PREFIX)) throw new Error('not a KMS-sealed value');
    const { Plaintext } = await this.kms.send(new DecryptCommand({ KeyId: this.keyId, CiphertextBlob: Buffer.from(sealed.slice(PREFIX.length), 'base64'), EncryptionContext: context }));
    return Buffer.from(Plaintext!).toString('utf8');
  }
}
