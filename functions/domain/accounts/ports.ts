/** A confirmed TOTP factor as stored: the secret only sealed, recovery codes only hashed. */
export interface TotpFactor {
  /** The canonical base32 secret, sealed by the SecretBox under `{ subject, purpose: 'totp' }`. */
  sealedSecret: string;
  /** `floor(epochSeconds / 30)` of the code that confirmed the factor; later codes must be newer. */
  timeStep: number;
  /** ISO 8601. */
  confirmedAt: string;
  /** `hashRecoveryCode(subject, code)` of each unused recovery code. */
  recoveryCodeHashes: readonly string[];
}

/**
 * Storage of a user's second factor, keyed by the token's `sub`: the factor belongs to the user,
 * not to the account (several users may share an account, each with their own authenticator).
 */
export interface MfaStore {
  hasTotpFactor(subject: string): Promise<boolean>;
  /**
   * Stores the factor and its recovery codes in one conditional write.
   * @returns false, storing nothing, when the user already has a factor (a concurrent confirmation won).
   */
  createTotpFactor(subject: string, factor: TotpFactor): Promise<boolean>;
  /**
   * Removes one recovery code, atomically, so that two concurrent uses cannot both succeed.
   * @returns How many codes remain, or undefined when the user has no factor or no such unused code.
   */
  consumeRecoveryCode(subject: string, codeHash: string): Promise<number | undefined>;
}

/** Separate failure budgets: TOTP guesses do not use up recovery-code guesses, nor the reverse. */
export type AttemptBucket = 'totp' | 'recovery';

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
