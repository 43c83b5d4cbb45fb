import type { SecretBox } from '../domain/secret-box.js';
import { kmsSecretBoxOnFirstUse } from './aws/kms-on-first-use.js';
import { LocalSecretBox } from './local-secret-box.js';

/**
 * KMS when deployed (`SECRETS_KMS_KEY_ID`), the process-held key in the local stack (`LOCAL_SECRETS_KEY`).
 * The KMS client is loaded when a secret is first sealed or opened, not at import.
 */
export function secretBoxFromEnv(env: NodeJS.ProcessEnv = process.env): SecretBox {
  if (env.SECRETS_KMS_KEY_ID) return kmsSecretBoxOnFirstUse(env.SECRETS_KMS_KEY_ID);
  if (env.LOCAL_SECRETS_KEY) return new LocalSecretBox(env.LOCAL_SECRETS_KEY);
  throw new Error('set SECRETS_KMS_KEY_ID (deployed) or LOCAL_SECRETS_KEY (local stack)');
}
