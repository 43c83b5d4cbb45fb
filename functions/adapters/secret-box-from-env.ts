import { KMSClient } from '@aws-sdk/client-kms';
import type { SecretBox } from '../domain/secret-box.js';
import { KmsSecretBox } from './aws/kms-secret-box.js';
import { LocalSecretBox } from './local-secret-box.js';

/** KMS when deployed (`SECRETS_KMS_KEY_ID`), the process-held key in the local stack (`LOCAL_SECRETS_KEY`). */
export function secretBoxFromEnv(env: NodeJS.ProcessEnv = process.env): SecretBox {
  if (env.SECRETS_KMS_KEY_ID) return new KmsSecretBox(new KMSClient({}), env.SECRETS_KMS_KEY_ID);
  if (env.LOCAL_SECRETS_KEY) return new LocalSecretBox(env.LOCAL_SECRETS_KEY);
  throw new Error('set SECRETS_KMS_KEY_ID (deployed) or LOCAL_SECRETS_KEY (local stack)');
}
