import type { BodyOf, DataOf, Transport } from '../http.js';
import { paginate, type ListOptions } from '../paging.js';
import type { Factors, MfaEvent, RecoveryCodeProof, TotpProof, TotpRegistration } from '../types.js';

/** What a step-up proof is asked for; each purpose but `sign_in` is spent by its one operation. */
export type ProofPurpose = NonNullable<BodyOf<'verifyTotp'>['purpose']>;

/** A step-up proof: `mfa_token` is sent as `X-MFA-Token`, or checked offline with `verifyProof`. */
export type Proof = TotpProof | RecoveryCodeProof;

/**
 * `confirmTotpRegistration`'s answer. Its `recovery_codes` are 10 codes or none, which the
 * document says with an `anyOf` of lengths; openapi-typescript reads that as `unknown`.
 */
export type TotpConfirmation = Omit<DataOf<'confirmTotpRegistration'>, 'recovery_codes'> & { recovery_codes: string[] };

/** A 6-digit code is a TOTP code; anything else (`7k3mq-x9d2a`) a recovery code. */
const TOTP_CODE = /^[0-9]{6}$/;

/** The account's second factors (MFA): TOTP authenticators, recovery codes and step-up proofs. */
export class AccountsView {
  constructor(private readonly http: Transport) {}

  /**
   * Checks a code and returns the step-up proof (`verifyTotp` for a 6-digit code, else
   * `verifyRecoveryCode`). A wrong code is a 400 `invalid_code` `FlowgateError`.
   */
  verify(code: string, options: { purpose?: ProofPurpose; factorId?: string } = {}): Promise<Proof> {
    return TOTP_CODE.test(code)
      ? this.verifyTotp({ code, purpose: options.purpose, factor_id: options.factorId })
      : this.verifyRecoveryCode({ code, purpose: options.purpose });
  }

  /** `verifyTotp`. */
  verifyTotp(input: BodyOf<'verifyTotp'>): Promise<TotpProof> {
    return this.http.data('verifyTotp', { json: input });
  }

  /** `verifyRecoveryCode`. */
  verifyRecoveryCode(input: BodyOf<'verifyRecoveryCode'>): Promise<RecoveryCodeProof> {
    return this.http.data('verifyRecoveryCode', { json: input });
  }

  /** Starts adding an authenticator (`startTotpRegistration`); from the second one on, a `sign_in` proof's token. */
  startTotpRegistration(options: { mfaToken?: string } = {}): Promise<TotpRegistration> {
    return this.http.data('startTotpRegistration', { headers: { 'x-mfa-token': options.mfaToken } });
  }

  /** Confirms it with a code the authenticator shows (`confirmTotpRegistration`); the first one returns the recovery codes. */
  confirmTotpRegistration(input: BodyOf<'confirmTotpRegistration'>, options: { mfaToken?: string } = {}): Promise<TotpConfirmation> {
    return this.http.data('confirmTotpRegistration', { json: input, headers: { 'x-mfa-token': options.mfaToken } }) as Promise<TotpConfirmation>;
  }

  /** The account's factors (`listFactors`). */
  listFactors(): Promise<Factors> {
    return this.http.data('listFactors');
  }

  /** Removes a factor (`removeFactor`), with a `remove_factor` proof. */
  async removeFactor(id: string, options: { mfaToken: string }): Promise<void> {
    await this.http.call('removeFactor', { path: { id }, headers: { 'x-mfa-token': options.mfaToken } });
  }

  /** New recovery codes (`regenerateRecoveryCodes`), with a `regenerate_recovery_codes` proof. */
  regenerateRecoveryCodes(options: { mfaToken: string }): Promise<DataOf<'regenerateRecoveryCodes'>> {
    return this.http.data('regenerateRecoveryCodes', { headers: { 'x-mfa-token': options.mfaToken } });
  }

  /** The account's MFA audit trail (`listMfaEvents`). */
  events(options: ListOptions = {}): AsyncGenerator<MfaEvent> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listMfaEvents', { query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.events, next: data.next_cursor };
    });
  }

  /** An administrator's view of a user's factors (`adminListUserFactors`). */
  adminListUserFactors(sub: string): Promise<Factors> {
    return this.http.data('adminListUserFactors', { path: { sub } });
  }

  /** An administrator removes a user's factors (`adminResetUserFactors`), with an `admin_reset` proof. */
  async adminResetUserFactors(sub: string, options: { mfaToken: string }): Promise<void> {
    await this.http.call('adminResetUserFactors', { path: { sub }, headers: { 'x-mfa-token': options.mfaToken } });
  }

  /** The public keys proofs are signed with (`getMfaJwks`); `verifyProof` fetches them itself. */
  jwks(): Promise<unknown> {
    return this.http.call('getMfaJwks').then((r) => r.json());
  }
}
