/** A TOTP factor as stored: the secret only sealed. */
export interface TotpFactor {
  /** Random, url-safe; what `DELETE /accounts/factors/{id}` names. */
  id: string;
  /** The user's label for the device ("Phone"); at most {@link MAX_FACTOR_NAME_LENGTH} characters. */
  name: string;
  /** The canonical base32 secret, sealed by the SecretBox under `{ subject, purpose: 'totp' }`. */
  sealedSecret: string;
  /** `floor(epochSeconds / 30)` of the last accepted code; only codes of later steps are accepted. */
  timeStep: number;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601 of the last accepted sign-in code; absent before the first. */
  lastUsedAt?: string;
}

/** A user's second factors and recovery codes: one record, so that every change to it is one conditional write. */
export interface MfaRecord {
  /** The account of the user when the first factor was confirmed (an admin reset must come from it). */
  accountId: string;
  factors: TotpFactor[];
  recoveryCodesLeft: number;
}

/** Longest factor name, in UTF-16 code units. */
export const MAX_FACTOR_NAME_LENGTH = 64;
/** Most TOTP factors one user may have. */
export const MAX_FACTORS = 10;

/**
 * Storage of a user's second factors, keyed by the token's `sub`: a factor belongs to the user,
 * not to the account (several users may share an account, each with their own authenticators).
 * Every method is one conditional write (dynalite, like the local stack, has no transactions).
 */
export interface MfaStore {
  hasTotpFactor(subject: string): Promise<boolean>;
  /** The user's record, read consistently; undefined when the user has no factor. */
  getMfa(subject: string): Promise<MfaRecord | undefined>;
  /**
   * Stores the first factor with its recovery codes in one conditional write.
   * @returns false, storing nothing, when the user already has a factor (a concurrent confirmation won).
   */
  createTotpFactor(subject: string, input: { accountId: string; factor: TotpFactor; recoveryCodeHashes: readonly string[] }): Promise<boolean>;
  /** @returns false when the user has no factor, already has `max` of them, or one of this id. */
  addTotpFactor(subject: string, factor: TotpFactor, max: number): Promise<boolean>;
  /**
   * Records `timeStep` as the factor's last accepted one, only if it is later than the stored one:
   * of two requests with one code exactly one gets true.
   */
  advanceTimeStep(subject: string, input: { factorId: string; timeStep: number; usedAt: string }): Promise<boolean>;
  /**
   * Removes a factor; removing the last one removes the record and with it the recovery codes.
   * @returns false when the user has no such factor.
   */
  removeFactor(subject: string, factorId: string): Promise<boolean>;
  /** Removes every factor and recovery code of the user. @returns false when there were none. */
  removeAll(subject: string): Promise<boolean>;
  /** Replaces the unused recovery codes in one write. @returns false when the user has no factor. */
  replaceRecoveryCodes(subject: string, codeHashes: readonly string[]): Promise<boolean>;
  /** Whether `codeHash` is one of the user's unused recovery codes (read consistently; a hint, not a spend). */
  hasRecoveryCode(subject: string, codeHash: string): Promise<boolean>;
  /**
   * Removes one recovery code, atomically, so that two concurrent uses cannot both succeed.
   * @returns How many codes remain, or undefined when the user has no factor or no such unused code.
   */
  consumeRecoveryCode(subject: string, codeHash: string): Promise<number | undefined>;
}

/**
 * Failure budgets: `totp` (15 minutes) and `totp_day` (24 hours) are spent by every failed check
 * of a TOTP code or step-up proof (confirm, verify, removal), `recovery` by recovery codes alone,
 * so a locked TOTP never blocks the rescue path; `any` is the 15-minute ceiling that TOTP and
 * recovery failures both spend, so alternating between them gains an attacker little.
 */
export type AttemptBucket = 'totp' | 'totp_day' | 'recovery' | 'any';

/** One of a user's attempt slots in a bucket (one per allowed failure), as last claimed. */
export interface AttemptSlot {
  slot: number;
  /** When it was claimed; it counts as a failure until `attemptedAtMs + window`. */
  attemptedAtMs: number;
}

/**
 * A fixed number of attempt slots per user and bucket. An attempt claims a free slot before the
 * code is checked; a failure leaves it claimed, a success gives it back. The store only makes the
 * claim atomic; what "free" means is decided by the caller through `freeIfAttemptedAtOrBeforeMs`.
 */
export interface AttemptStore {
  /** The claimed slots, read consistently; expired ones may still be listed. */
  listSlots(subject: string, bucket: AttemptBucket): Promise<AttemptSlot[]>;
  /**
   * Claims `slot` if nobody holds it or its holder attempted at or before `freeIfAttemptedAtOrBeforeMs`.
   * @returns false when another attempt holds it.
   */
  claimSlot(input: {
    subject: string;
    bucket: AttemptBucket;
    slot: number;
    reservation: string;
    attemptedAtMs: number;
    freeIfAttemptedAtOrBeforeMs: number;
    /** Epoch seconds after which the item may be deleted (DynamoDB TTL). */
    expiresAt: number;
  }): Promise<boolean>;
  /** Frees `slot` if `reservation` still holds it; otherwise does nothing. */
  releaseSlot(input: { subject: string; bucket: AttemptBucket; slot: number; reservation: string }): Promise<void>;
}

/** What happened to a user's second factors; recorded with where the request came from. */
export type MfaEventType =
  | 'factor_enrolled'
  | 'verification_succeeded'
  | 'verification_failed'
  | 'locked_out'
  | 'factor_removed'
  | 'recovery_codes_regenerated'
  | 'recovery_code_used'
  | 'recovery_code_failed'
  | 'admin_reset'
  /** An admin key or administrator listed the user's factors (`actor` says which). */
  | 'factors_listed_by_admin';

/** The request's origin as the gateway saw it. */
export interface ClientInfo {
  sourceIp?: string;
  userAgent?: string;
}

/** One audit record: never a code, a secret or a token. */
export interface MfaEvent {
  type: MfaEventType;
  /** ISO 8601. */
  at: string;
  factorId?: string;
  sourceIp?: string;
  userAgent?: string;
  /** Who did it when not the user: the administrator's `sub` for an admin reset; `apikey:<id>` or a `sub` for a listing. */
  actor?: string;
}

/** The audit log of a user's MFA events, kept {@link MFA_EVENT_RETENTION_DAYS} days. */
export interface MfaEventLog {
  record(subject: string, event: MfaEvent): Promise<void>;
  /** Newest first. */
  list(subject: string, page: { limit: number; cursor?: string }): Promise<{ events: MfaEvent[]; nextCursor: string | null }>;
}

export const MFA_EVENT_RETENTION_DAYS = 90;

/** A public key of the step-up proof, as a JWK (RFC 7517) with its `kid`. */
export interface PublicSigningKey {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

/**
 * Signs step-up proofs with ES256. The first key of `publicKeys()` signs; the others are retired
 * keys kept listed until the proofs they signed have expired.
 */
export interface TokenSigner {
  publicKeys(): Promise<PublicSigningKey[]>;
  /** The raw `r || s` signature (64 bytes, as JWS wants it) of `data` under the key `kid`. */
  sign(kid: string, data: Uint8Array): Promise<Uint8Array>;
}

/**
 * The step-up proofs already spent, by `jti`. A proof for a sensitive operation is spent once:
 * `spend` is one conditional write, so of two requests with one proof exactly one gets true
 * (dynalite has no transactions, and none is needed).
 */
export interface ProofLedger {
  /** @returns false when the proof was spent before. `expiresAt` (epoch seconds): when the record may go. */
  spend(input: { jti: string; expiresAt: number }): Promise<boolean>;
}
