import type { TokenSigner } from '../domain/accounts/index.js';
import type { Settings } from '../settings.js';
import type { AwsClients } from './aws/clients.js';
import { kmsTokenSignerOnFirstUse } from './aws/kms-on-first-use.js';
import { LocalTokenSigner } from './local-token-signer.js';

/**
 * KMS when deployed (`MFA_SIGNING_KEY_ID`, then the retired `MFA_RETIRED_SIGNING_KEY_IDS`), the
 * process-held keys on the local stack (`LOCAL_MFA_SIGNING_KEYS`). The KMS client loads with the
 * first proof issued or checked, not at init.
 */
export function tokenSignerFrom(settings: Pick<Settings, 'mfaSigningKeyId' | 'mfaRetiredSigningKeyIds' | 'localMfaSigningKeys'>, aws: AwsClients): TokenSigner {
  if (settings.mfaSigningKeyId) return kmsTokenSignerOnFirstUse([settings.mfaSigningKeyId, ...settings.mfaRetiredSigningKeyIds], aws);
  if (settings.localMfaSigningKeys.length > 0) return new LocalTokenSigner(settings.localMfaSigningKeys);
  throw new Error('set MFA_SIGNING_KEY_ID (deployed) or LOCAL_MFA_SIGNING_KEYS (local stack)');
}
