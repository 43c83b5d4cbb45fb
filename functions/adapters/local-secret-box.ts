import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../domain/secret-box.js';

const PREFIX = 'local:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Context as additional authenticated data, in a canonical (sorted) form. */
const aad = (context: Record<string, string>) => Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))), 'utf8');

/**
 * The local stack's stand-in for KMS: AES-256-GCM with a key held by the process
 * (`LOCAL_SECRETS_KEY`, 32 bytes base64), the context authenticated as additional data.
 */
export class LocalSecretBox implements SecretBox {
  private readonly key: Buffer;

  constructor(keyBase64: string) {
    this.key = Buffer.from(keyBase64, 'base64');
    if (this.key.length !== 32) throw new Error('LOCAL_SECRETS_KEY must be 32 bytes, base64-encoded');
  }

  async seal(plaintext: string, context: Record<string, string>): Promise<string> {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(aad(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  async open(sealed: string, context: Record<string, string>): Promise<string> {
    if (!sealed.startsWith(PREFIX)) throw new Error('not a locally sealed value');
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES)).setAAD(aad(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
