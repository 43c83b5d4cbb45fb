import { AppError } from '../../shared/errors.js';
import type { RandomBytes } from '../random-bytes.js';
import { generateTotpSecret, otpauthUri } from '../totp/index.js';
import { audited, type AuditDeps } from './audit.js';
import type { ClientInfo, MfaStore } from './ports.js';
import { requireFreshProof, type StepUpDeps } from './step-up.js';

export interface StartRegistrationDeps extends StepUpDeps, AuditDeps {
  mfa: Pick<MfaStore, 'hasTotpFactor'>;
  randomBytes: RandomBytes;
  /** Shown by authenticator apps above the account name; non-empty, no colon. */
  issuer: string;
}

/**
 * The account name in the `otpauth://` label: the subject, with colons (the label's separator,
 * which apps would split on) shown as underscores. It is only a label; nothing is keyed by it.
 */
export const totpAccountName = (subject: string): string => subject.replaceAll(':', '_');

/**
 * A fresh 160-bit secret and the URI to show as a QR code. Nothing is stored: the user proves
 * possession with `confirmRegistration`, which takes the secret back.
 *
 * @throws AppError `already_registered` when the user has a confirmed factor and sends no step-up
 *   proof (`mfaToken`); `mfa_required` when the proof sent does not hold.
 */
export async function startRegistration(
  deps: StartRegistrationDeps,
  input: { subject: string; mfaToken?: string; app?: string; client: ClientInfo },
): Promise<{ secret: string; otpauthUri: string }> {
  const { subject, client } = input;
  if (await deps.mfa.hasTotpFactor(subject)) {
    if (input.mfaToken === undefined) throw new AppError('already_registered');
    // Only shows a new secret, so a sign-in proof will do and nothing is spent; the confirmation spends an `add_factor` one.
    await audited(deps, { subject, client, failed: 'verification_failed' }, () =>
      requireFreshProof(deps, { subject, mfaToken: input.mfaToken, app: input.app, purposes: ['sign_in', 'add_factor'], spend: false }));
  }
  const secret = generateTotpSecret(deps.randomBytes);
  return { secret, otpauthUri: otpauthUri({ secret, issuer: deps.issuer, accountName: totpAccountName(subject) }) };
}
