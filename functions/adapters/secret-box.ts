import type { SecretBox } from '../domain/secret-box.js';
import type { Settings } from '../settings.js';
import type { AwsClients } from './aws/clients.js';
import { kmsSecretBoxOnFirstUse } from './aws/kms-on-first-use.js';
import { LocalSecretBox } from './local-secret-box.js';

/**
 * KMS when deployed (`SECRETS_KMS_KEY_ID`), the process-held key in the local stack (`LOCAL_SECRETS_KEY`).
 * The KMS client is loaded when a secret is first sealed or opened, not at import.
 */
export function secretBoxFrom(settings: Pick<Settings, 'secretsKmsKeyId' | 'localSecretsKey'>, aws: AwsClients): SecretBox {
  if (settings.secretsKmsKeyId) return kmsSecretBoxOnFirstUse(settings.secretsKmsKeyId, aws);
  if (settings.localSecretsKey) return new LocalSecretBox(settings.localSecretsKey);
  throw new Error('set SECRETS_KMS_KEY_ID (deployed) or LOCAL_SECRETS_KEY (local stack)');
}
