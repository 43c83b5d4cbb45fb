/** Loaded by `kmsSecretBoxOnFirstUse`: the KMS client and what uses it, one chunk of the bundle. */
import type { TokenSigner } from '../../../domain/accounts/index.js';
import type { SecretBox } from '../../../domain/secret-box.js';
import type { AwsClients } from '../clients.js';
import { kmsClient } from '../clients/kms.js';
import { KmsSecretBox } from '../kms-secret-box.js';
import { KmsTokenSigner } from '../kms-token-signer.js';

export const secretBox = (keyId: string, aws: AwsClients): SecretBox => new KmsSecretBox(kmsClient(aws), keyId);

export const tokenSigner = (keyIds: readonly string[], aws: AwsClients): TokenSigner => new KmsTokenSigner(kmsClient(aws), keyIds);
