import type { ApiKeyEventLog, ApiKeyStore, Scope } from '../api-keys.js';
import type { Clock } from '../clock.js';
import type { RandomBytes } from '../random-bytes.js';
import type { SecretBox } from '../secret-box.js';
import { listEvents } from './audit.js';
import { confirmRegistration, type ConfirmedFactor } from './confirm-registration.js';
import { adminListFactors, adminResetFactors, listFactors, regenerateRecoveryCodes, removeFactor, type FactorsView } from './factors.js';
import { mintAdminApiKey } from './admin-api-key.js';
import type { ProofPurpose } from './mfa-token.js';
import type { AttemptStore, ClientInfo, MfaEvent, MfaEventLog, MfaStore, ProofLedger, TokenSigner } from './ports.js';
import { startRegistration } from './start-registration.js';
import { verifyRecoveryCode } from './verify-recovery-code.js';
import { verifyTotp } from './verify-totp.js';

export { totpSecretContext } from './confirm-registration.js';
export { totpAccountName } from './start-registration.js';
export { MFA_TOKEN_TTL_SECONDS, PROOF_PURPOSES, isProofPurpose, type ProofPurpose } from './mfa-token.js';
export { publicSigningKey } from './signing-key.js';
export type { FactorsView, FactorView } from './factors.js';
export type {
  AttemptBucket, AttemptSlot, AttemptStore, ClientInfo, MfaEvent, MfaEventLog, MfaEventType, MfaRecord, MfaStore,
  ProofLedger, PublicSigningKey, TokenSigner, TotpFactor,
} from './ports.js';

export interface AccountsDeps {
  mfa: MfaStore;
  attempts: AttemptStore;
  events: MfaEventLog;
  secretBox: SecretBox;
  signer: TokenSigner;
  proofs: ProofLedger;
  /** Admin keys are minted here, where proofs are checked and spent. */
  keys: Pick<ApiKeyStore, 'create'>;
  keyEvents: Pick<ApiKeyEventLog, 'record'>;
  now: Clock;
  randomBytes: RandomBytes;
  /** The issuer authenticator apps show (`TOTP_ISSUER`). */
  issuer: string;
  /** The `iss` of step-up proofs: the gateway's base URL. */
  tokenIssuer: string;
}

/** Who is asking and from where: every use case but the JWKS is keyed by the caller's `sub`. */
interface Caller {
  subject: string;
  accountId: string;
  client: ClientInfo;
  /** The app of the caller's token: the audience of the proofs it gets and sends. */
  app?: string;
}

/** The accounts use cases. */
export interface AccountUseCases {
  startRegistration(input: Caller & { mfaToken?: string }): Promise<{ secret: string; otpauthUri: string }>;
  confirmRegistration(input: Caller & { code: string; secret: string; name?: string; mfaToken?: string }): Promise<ConfirmedFactor>;
  verifyTotp(input: Caller & { code: string; factorId?: string; purpose?: ProofPurpose }): Promise<{ mfaToken: string; expiresAt: string; factorId: string }>;
  verifyRecoveryCode(input: Caller & { code: string; purpose?: ProofPurpose }): Promise<{ remaining: number; mfaToken: string; expiresAt: string }>;
  listFactors(input: { subject: string }): Promise<FactorsView>;
  removeFactor(input: Caller & { factorId: string; mfaToken?: string }): Promise<void>;
  regenerateRecoveryCodes(input: Caller & { mfaToken?: string }): Promise<{ recoveryCodes: string[] }>;
  listEvents(input: { subject: string; limit: number; cursor?: string }): Promise<{ events: MfaEvent[]; nextCursor: string | null }>;
  adminListFactors(input: { accountId: string; subject: string; actor: string; client: ClientInfo }): Promise<FactorsView>;
  adminResetFactors(input: { accountId: string; subject: string; actor: string; mfaToken?: string; app?: string; client: ClientInfo }): Promise<void>;
  mintAdminApiKey(input: Caller & { mfaToken?: string }): Promise<{ id: string; apiKey: string; createdAt: string; scopes: Scope[] }>;
  /** The public keys of step-up proofs, the current one first. */
  publicKeys(): ReturnType<TokenSigner['publicKeys']>;
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
    verifyTotp: (input) => verifyTotp(deps, input),
    verifyRecoveryCode: (input) => verifyRecoveryCode(deps, input),
    listFactors: (input) => listFactors(deps, input),
    removeFactor: (input) => removeFactor(deps, input),
    regenerateRecoveryCodes: (input) => regenerateRecoveryCodes(deps, input),
    listEvents: (input) => listEvents(deps, input),
    adminListFactors: (input) => adminListFactors(deps, input),
    adminResetFactors: (input) => adminResetFactors(deps, input),
    mintAdminApiKey: (input) => mintAdminApiKey(deps, input),
    publicKeys: () => deps.signer.publicKeys(),
  };
}
