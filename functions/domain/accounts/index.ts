import type { Clock } from '../clock.js';
import type { RandomBytes } from '../random-bytes.js';
import type { SecretBox } from '../secret-box.js';
import { confirmRegistration } from './confirm-registration.js';
import type { AttemptStore, MfaStore } from './ports.js';
import { startRegistration } from './start-registration.js';
import { verifyRecoveryCode } from './verify-recovery-code.js';

export { totpSecretContext } from './confirm-registration.js';
export { totpAccountName } from './start-registration.js';
export type { AttemptBucket, AttemptSlot, AttemptStore, MfaStore, TotpFactor } from './ports.js';

export interface AccountsDeps {
  mfa: MfaStore;
  attempts: AttemptStore;
  secretBox: SecretBox;
  now: Clock;
  randomBytes: RandomBytes;
  /** The issuer authenticator apps show (`TOTP_ISSUER`). */
  issuer: string;
}

/** The accounts use cases, each keyed by the caller's `sub`. */
export interface AccountUseCases {
  startRegistration(input: { subject: string }): Promise<{ secret: string; otpauthUri: string }>;
  confirmRegistration(input: { subject: string; code: string; secret: string }): Promise<{ recoveryCodes: string[] }>;
  verifyRecoveryCode(input: { subject: string; code: string }): Promise<{ remaining: number }>;
}

/**
 * Wires the use cases to their dependencies once per execution environment.
 *
 * @throws TypeError when `issuer` is empty or contains a colon: a misconfiguration, refused at
 *   start-up rather than on every registration.
 */
export function createAccountUseCases(deps: AccountsDeps): AccountUseCases {
  if (deps.issuer.length === 0 || deps.issuer.includes(':')) {
    throw new TypeError('the TOTP issuer must be non-empty and contain no colon');
  }
  return {
    startRegistration: (input) => startRegistration(deps, input),
    confirmRegistration: (input) => confirmRegistration(deps, input),
    verifyRecoveryCode: (input) => verifyRecoveryCode(deps, input),
  };
}
