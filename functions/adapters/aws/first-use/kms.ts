/** Loaded by `kmsSecretBoxOnFirstUse`: the KMS client and what uses it, one chunk of the bundle. */
import type { SecretBox } from '../../../domain/secret-box.js';
import { kmsClient } from '../kms-client.js';
import { KmsSecretBox } from '../kms-secret-box.js';

export const secretBox = (keyId: string): SecretBox => new KmsSecretBox(kmsClient, keyId);
