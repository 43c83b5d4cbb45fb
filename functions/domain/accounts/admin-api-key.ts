import { mintApiKey, type ApiKeyEventLog, type ApiKeyStore, type Scope } from '../api-keys.js';
import { audited, type AuditDeps } from './audit.js';
import type { ClientInfo } from './ports.js';
import { requireFreshProof, type StepUpDeps } from './step-up.js';

export interface AdminApiKeyDeps extends StepUpDeps, AuditDeps {
  keys: Pick<ApiKeyStore, 'create'>;
  keyEvents: Pick<ApiKeyEventLog, 'record'>;
}

const ADMIN_SCOPES: readonly Scope[] = ['admin'];

/**
 * Mints an `admin` API key for the account. Only an administrator's token reaches it (the route
 * table), and only with a fresh step-up proof of the administrator for `mint_admin_key`, spent by
 * it; the key's audit log records who minted it.
 * @throws AppError `mfa_required` or `too_many_attempts`.
 */
export async function mintAdminApiKey(deps: AdminApiKeyDeps, input: { accountId: string; subject: string; mfaToken?: string; app?: string; client: ClientInfo }) {
  const { subject, client } = input;
  await audited(deps, { subject, client, failed: 'verification_failed' }, () =>
    requireFreshProof(deps, { subject, mfaToken: input.mfaToken, app: input.app, purposes: ['mint_admin_key'], spend: true }));
  return mintApiKey({ store: deps.keys, events: deps.keyEvents, randomBytes: deps.randomBytes, now: deps.now }, {
    accountId: input.accountId, actor: subject, scopes: ADMIN_SCOPES, client,
  });
}
