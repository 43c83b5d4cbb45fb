import { AppError } from '../../shared/errors.js';
import type { RandomBytes } from '../random-bytes.js';
import { generateTotpSecret, otpauthUri } from '../totp/index.js';
import type { MfaStore } from './ports.js';
import { requireFreshProof, type StepUpDeps } from './step-up.js';

export interface StartRegistrationDeps extends StepUpDeps {
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
  input: { subject: string; mfaToken?: string },
): Promise<{ secret: string; otpauthUri: string }> {
  if (await deps.mfa.hasTotpFactor(input.subject)) {
    if (input.mfaToken === undefined) throw new AppError('already_registered');
    await requireFreshProof(deps, { subject: input.subject, mfaToken: input.mfaToken });
  }
  const secret = generateTotpSecret(deps.randomBytes);
  return { secret, otpauthUri: otpauthUri({ secret, issuer: deps.issuer, accountName: totpAccountName(input.subject) }) };
}
