import type { KMSClient } from '@aws-sdk/client-kms';
import type { SecretBox } from '../domain/secret-box.js';
import type { Settings } from '../settings.js';
import { KmsSecretBox } from './aws/kms-secret-box.js';
import { LocalSecretBox } from './local-secret-box.js';

/** KMS when deployed (`SECRETS_KMS_KEY_ID`), the process-held key in the local stack (`LOCAL_SECRETS_KEY`). */
export function secretBoxFrom(settings: Pick<Settings, 'secretsKmsKeyId' | 'localSecretsKey'>, kms: { readonly kms: KMSClient }): SecretBox {
  if (settings.secretsKmsKeyId) return new KmsSecretBox(kms.kms, settings.secretsKmsKeyId);
  if (settings.localSecretsKey) return new LocalSecretBox(settings.localSecretsKey);
  throw new Error('set SECRETS_KMS_KEY_ID (deployed) or LOCAL_SECRETS_KEY (local stack)');
}
