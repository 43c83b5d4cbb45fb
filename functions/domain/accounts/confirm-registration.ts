import { AppError } from '../../shared/errors.js';
import type { Clock } from '../clock.js';
import type { SecretBox } from '../secret-box.js';
import { SECRET_PURPOSES, SECRET_PURPOSE_KEY } from '../secret-purposes.js';
import {
  generateRecoveryCodes,
  hashRecoveryCode,
  isTotpCodeFormat,
  normalizeTotpSecret,
  verifyTotpCode,
} from '../totp/index.js';
import { withAttemptBudget } from './attempt-budget.js';
import { audited, type AuditDeps } from './audit.js';
import { MAX_FACTORS, MAX_FACTOR_NAME_LENGTH, type ClientInfo, type MfaStore, type TotpFactor } from './ports.js';
import type { FreshProof } from './mfa-token.js';
import { requireFreshProof, spendProof, type StepUpDeps } from './step-up.js';

export interface ConfirmRegistrationDeps extends StepUpDeps, AuditDeps {
  mfa: Pick<MfaStore, 'hasTotpFactor' | 'getMfa' | 'createTotpFactor' | 'addTotpFactor'>;
  secretBox: Pick<SecretBox, 'seal'>;
  now: Clock;
}

/** The SecretBox context of a user's TOTP secret: a sealed secret copied to another user will not open. */
export const totpSecretContext = (subject: string): Record<string, string> => ({ subject, [SECRET_PURPOSE_KEY]: SECRET_PURPOSES.totp });

/** The name of a factor confirmed without one. */
export const DEFAULT_FACTOR_NAME = 'Authenticator';
const FACTOR_ID_BYTES = 9;

/** A factor name as given: trimmed, 1–64 characters, no control characters. */
export function factorName(input: string | undefined): string {
  if (input === undefined) return DEFAULT_FACTOR_NAME;
  const name = input.trim();
  // eslint-disable-next-line no-control-regex
  if (name.length === 0 || name.length > MAX_FACTOR_NAME_LENGTH || /[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw new AppError('validation_error', 'bad name', undefined, `name must be 1 to ${MAX_FACTOR_NAME_LENGTH} characters without control characters`);
  }
  return name;
}

const tooManyFactors = () => new AppError('conflict', 'factor limit reached (or the last factor was removed meanwhile)', undefined, `a user may have at most ${MAX_FACTORS} factors`);

export interface ConfirmedFactor {
  factorId: string;
  /** Issued with the first factor only; empty for a later one. */
  recoveryCodes: string[];
  first: boolean;
}

/**
 * Confirms a TOTP registration: when `code` matches `secret` now (± one 30 s step), stores the
 * factor for the user. The first factor comes with 10 recovery codes, the only time they are shown.
 *
 * In order: malformed input is refused first and costs no attempt; a user who already has a factor
 * gets 409 before any code is checked unless a fresh step-up proof for `add_factor` comes with the
 * request (so a stolen bearer token cannot add an attacker's authenticator), spent once the code holds; then the code is checked against the
 * failure budget. The first factor is created with one conditional write, so of two concurrent
 * first confirmations exactly one succeeds and the other gets 409 — which is also what refuses a
 * replay of the accepted code; its time step is stored for later checks to refuse older codes.
 *
 * @throws AppError `validation_error`, `already_registered`, `mfa_required`, `conflict` (10 factors),
 *   `too_many_attempts` or `invalid_code`.
 */
export async function confirmRegistration(
  deps: ConfirmRegistrationDeps,
  input: { subject: string; accountId: string; code: string; secret: string; name?: string; mfaToken?: string; app?: string; client: ClientInfo },
): Promise<ConfirmedFactor> {
  const { subject, code } = input;
  const secret = normalizeTotpSecret(input.secret);
  if (!isTotpCodeFormat(code)) throw new AppError('validation_error', undefined, undefined, 'code must be 6 ASCII digits');
  const name = factorName(input.name);
  const first = !(await deps.mfa.hasTotpFactor(subject));
  let proof: FreshProof | undefined;
  if (!first) {
    if (input.mfaToken === undefined) throw new AppError('already_registered');
    // Checked here, spent once the code holds: a mistyped code does not cost the user their proof.
    proof = await audited(deps, { subject, client: input.client, failed: 'verification_failed' }, () =>
      requireFreshProof(deps, { subject, mfaToken: input.mfaToken, app: input.app, purposes: ['add_factor'], spend: false }));
    // Before the code is checked, so a full list costs no attempt.
    if (((await deps.mfa.getMfa(subject))?.factors.length ?? 0) >= MAX_FACTORS) throw tooManyFactors();
  }

  const nowMs = deps.now();
  const factorId = Buffer.from(deps.randomBytes(FACTOR_ID_BYTES)).toString('base64url');
  return audited(deps, { subject, client: input.client, failed: 'verification_failed', succeeded: () => ({ type: 'factor_enrolled', factorId }) }, () =>
    withAttemptBudget(deps, { subject, bucket: 'totp', nowMs }, async () => {
      const verification = await verifyTotpCode({ secret, code, nowMs });
      if (!verification.valid) throw new AppError('invalid_code', 'code does not match the secret within one step');

      const factor: TotpFactor = {
        id: factorId, name,
        sealedSecret: await deps.secretBox.seal(secret, totpSecretContext(subject)),
        timeStep: verification.timeStep,
        createdAt: new Date(nowMs).toISOString(),
      };
      if (proof) {
        await spendProof(deps, proof);
        if (!(await deps.mfa.addTotpFactor(subject, factor, MAX_FACTORS))) throw tooManyFactors();
        return { factorId, recoveryCodes: [], first };
      }
      const recoveryCodes = generateRecoveryCodes(deps.randomBytes);
      const created = await deps.mfa.createTotpFactor(subject, {
        accountId: input.accountId,
        factor,
        recoveryCodeHashes: recoveryCodes.map((recoveryCode) => hashRecoveryCode(subject, recoveryCode)),
      });
      if (!created) throw new AppError('already_registered', 'a concurrent confirmation stored its factor first');
      return { factorId, recoveryCodes, first };
    }));
}
