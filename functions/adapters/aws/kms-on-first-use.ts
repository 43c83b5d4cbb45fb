import type { TokenSigner } from '../../domain/accounts/index.js';
import type { SecretBox } from '../../domain/secret-box.js';
import { portOnFirstCall } from '../lazy.js';
import type { AwsClients } from './clients.js';

/**
 * KMS sealing, loaded with the KMS client by the first secret sealed or opened: the receiver opens
 * one only when its trigger cache misses, and the triggers function seals one only when a trigger
 * gets a signing secret. See `sfn-on-first-use.ts` for the bundle's side.
 */
export const kmsSecretBoxOnFirstUse = (keyId: string, aws: AwsClients): SecretBox =>
  portOnFirstCall(async () => (await import('./first-use/kms.js')).secretBox(keyId, aws), { seal: true, open: true });

/** KMS signing of step-up proofs, loaded with the KMS client by the first proof issued or key listed. */
export const kmsTokenSignerOnFirstUse = (keyIds: readonly string[], aws: AwsClients): TokenSigner =>
  portOnFirstCall(async () => (await import('./first-use/kms.js')).tokenSigner(keyIds, aws), { publicKeys: true, sign: true });
