import { AppError } from '../../shared/errors.js';
import { generateRecoveryCodes, hashRecoveryCode } from '../totp/index.js';
import { audited, recordEvent, type AuditDeps } from './audit.js';
import type { ClientInfo, MfaStore } from './ports.js';
import { requireFreshProof, spendProof, type StepUpDeps } from './step-up.js';

export interface FactorsDeps extends StepUpDeps, AuditDeps {
  mfa: Pick<MfaStore, 'getMfa' | 'removeFactor' | 'removeAll' | 'replaceRecoveryCodes'>;
}

/** A factor as listed: never its secret. */
export interface FactorView {
  id: string;
  type: 'totp';
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface FactorsView {
  factors: FactorView[];
  recoveryCodesLeft: number;
}

/** The user's factors, oldest first, and how many recovery codes are left. */
export async function listFactors(deps: Pick<FactorsDeps, 'mfa'>, input: { subject: string }): Promise<FactorsView> {
  const record = await deps.mfa.getMfa(input.subject);
  return {
    factors: (record?.factors ?? [])
      .map((factor) => ({ id: factor.id, type: 'totp' as const, name: factor.name, createdAt: factor.createdAt, lastUsedAt: factor.lastUsedAt ?? null }))
      .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1)),
    recoveryCodesLeft: record?.recoveryCodesLeft ?? 0,
  };
}

/**
 * Removes one factor after a fresh step-up proof for `remove_factor`, spent by this removal; the
 * last factor takes the recovery codes with it.
 * @throws AppError `mfa_required`, `too_many_attempts` or `not_found`.
 */
export async function removeFactor(deps: FactorsDeps, input: { subject: string; factorId: string; mfaToken?: string; app?: string; client: ClientInfo }): Promise<void> {
  const { subject, factorId, client } = input;
  await audited(deps, { subject, client, failed: 'verification_failed', factorId }, () =>
    requireFreshProof(deps, { subject, mfaToken: input.mfaToken, app: input.app, purposes: ['remove_factor'], spend: true }));
  if (!(await deps.mfa.removeFactor(subject, factorId))) throw new AppError('not_found', 'no such factor');
  await recordEvent(deps, subject, { type: 'factor_removed', factorId, client });
}

/**
 * Issues 10 new recovery codes after a fresh step-up proof for `regenerate_recovery_codes`, spent
 * by it; the old set stops working in the same write.
 * @throws AppError `mfa_required`, `too_many_attempts` or `not_found` (no factor).
 */
export async function regenerateRecoveryCodes(deps: FactorsDeps, input: { subject: string; mfaToken?: string; app?: string; client: ClientInfo }): Promise<{ recoveryCodes: string[] }> {
  const { subject, client } = input;
  await audited(deps, { subject, client, failed: 'verification_failed' }, () =>
    requireFreshProof(deps, { subject, mfaToken: input.mfaToken, app: input.app, purposes: ['regenerate_recovery_codes'], spend: true }));
  const recoveryCodes = generateRecoveryCodes(deps.randomBytes);
  if (!(await deps.mfa.replaceRecoveryCodes(subject, recoveryCodes.map((code) => hashRecoveryCode(subject, code))))) {
    throw new AppError('not_found', 'the user has no factor');
  }
  await recordEvent(deps, subject, { type: 'recovery_codes_regenerated', client });
  return { recoveryCodes };
}

/** A user of the account with factors; a user of another account, or one without, is 404 alike: the answer says nothing of other accounts' users. */
async function accountUserRecord(deps: Pick<FactorsDeps, 'mfa'>, input: { accountId: string; subject: string }) {
  const record = await deps.mfa.getMfa(input.subject);
  if (!record || record.accountId !== input.accountId) throw new AppError('not_found', 'no factors of this user in this account');
  return record;
}

/**
 * An account's view of one of its users' factors (an admin key, or an administrator's token),
 * recorded in the user's audit log with who looked.
 */
export async function adminListFactors(deps: FactorsDeps, input: { accountId: string; subject: string; actor: string; client: ClientInfo }): Promise<FactorsView> {
  await accountUserRecord(deps, input);
  const view = await listFactors(deps, input);
  await recordEvent(deps, input.subject, { type: 'factors_listed_by_admin', actor: input.actor, client: input.client });
  return view;
}

/**
 * Removes every factor and recovery code of one of the account's users, recorded as an admin reset
 * with the administrator who did it. Only an administrator's token reaches it (the route table),
 * and only with a fresh step-up proof of the administrator for `admin_reset`, spent by it: a
 * stolen token or any API key alone cannot remove a user's factors.
 * @throws AppError `mfa_required`, `too_many_attempts` or `not_found`.
 */
export async function adminResetFactors(
  deps: FactorsDeps,
  input: { accountId: string; subject: string; actor: string; mfaToken?: string; app?: string; client: ClientInfo },
): Promise<void> {
  const { actor, client } = input;
  // The proof is the administrator's: its failures count against, and are logged for, the administrator.
  const proof = await audited(deps, { subject: actor, client, failed: 'verification_failed' }, () =>
    requireFreshProof(deps, { subject: actor, mfaToken: input.mfaToken, app: input.app, purposes: ['admin_reset'], spend: false }));
  await accountUserRecord(deps, input);
  await spendProof(deps, proof);
  if (!(await deps.mfa.removeAll(input.subject))) throw new AppError('not_found', 'no factors of this user');
  await recordEvent(deps, input.subject, { type: 'admin_reset', actor, client });
}
