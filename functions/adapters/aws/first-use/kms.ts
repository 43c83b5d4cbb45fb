/** Loaded by `kmsSecretBoxOnFirstUse`: the KMS client and what uses it, one chunk of the bundle. */
import type { SecretBox } from '../../../domain/secret-box.js';
import type { AwsClients } from '../clients.js';
import { kmsClient } from '../clients/kms.js';
import { KmsSecretBox } from '../kms-secret-box.js';

export const secretBox = (keyId: string, aws: AwsClients): SecretBox => new KmsSecretBox(kmsClient(aws), keyId);
