import { AppError } from '../../shared/errors.js';
import { generateRecoveryCodes, hashRecoveryCode } from '../totp/index.js';
import { audited, recordEvent, type AuditDeps } from './audit.js';
import type { ClientInfo, MfaStore } from './ports.js';
import { requireFreshProof, type StepUpDeps } from './step-up.js';

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
 * Removes one factor after a fresh step-up proof; the last factor takes the recovery codes with it.
 * @throws AppError `mfa_required`, `too_many_attempts` or `not_found`.
 */
export async function removeFactor(deps: FactorsDeps, input: { subject: string; factorId: string; mfaToken?: string; client: ClientInfo }): Promise<void> {
  const { subject, factorId, client } = input;
  await audited(deps, { subject, client, failed: 'verification_failed', factorId }, () => requireFreshProof(deps, { subject, mfaToken: input.mfaToken }));
  if (!(await deps.mfa.removeFactor(subject, factorId))) throw new AppError('not_found', 'no such factor');
  await recordEvent(deps, subject, { type: 'factor_removed', factorId, client });
}

/**
 * Issues 10 new recovery codes after a fresh step-up proof; the old set stops working in the same write.
 * @throws AppError `mfa_required`, `too_many_attempts` or `not_found` (no factor).
 */
export async function regenerateRecoveryCodes(deps: FactorsDeps, input: { subject: string; mfaToken?: string; client: ClientInfo }): Promise<{ recoveryCodes: string[] }> {
  const { subject, client } = input;
  await audited(deps, { subject, client, failed: 'verification_failed' }, () => requireFreshProof(deps, { subject, mfaToken: input.mfaToken }));
  const recoveryCodes = generateRecoveryCodes(deps.randomBytes);
  if (!(await deps.mfa.replaceRecoveryCodes(subject, recoveryCodes.map((code) => hashRecoveryCode(subject, code))))) {
    throw new AppError('not_found', 'the user has no factor');
  }
  await recordEvent(deps, subject, { type: 'recovery_codes_regenerated', client });
  return { recoveryCodes };
}

/**
 * An account's view of one of its users' factors (with its API key). A user of another account,
 * or one without factors, is 404 alike: the answer says nothing of other accounts' users.
 */
export async function adminListFactors(deps: Pick<FactorsDeps, 'mfa'>, input: { accountId: string; subject: string }): Promise<FactorsView> {
  const record = await deps.mfa.getMfa(input.subject);
  if (!record || record.accountId !== input.accountId) throw new AppError('not_found', 'no factors of this user in this account');
  return listFactors(deps, input);
}

/** Removes every factor and recovery code of one of the account's users, recorded as an admin reset. */
export async function adminResetFactors(deps: FactorsDeps, input: { accountId: string; subject: string; actor: string; client: ClientInfo }): Promise<void> {
  await adminListFactors(deps, input);
  if (!(await deps.mfa.removeAll(input.subject))) throw new AppError('not_found', 'no factors of this user');
  await recordEvent(deps, input.subject, { type: 'admin_reset', actor: input.actor, client: input.client });
}
