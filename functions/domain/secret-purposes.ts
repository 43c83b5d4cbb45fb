/**
 * The `purpose` entry of every SecretBox context, one per kind of sealed secret. The deployed
 * stack grants each function the secrets key only for the purposes the manifest gives it (a KMS
 * condition on `kms:EncryptionContext:purpose`), so the domain and the grants share these values.
 */
export const SECRET_PURPOSES = {
  /** A user's TOTP secret (`totpSecretContext`). */
  totp: 'totp',
  /** A trigger's webhook signing secret (`signingSecretContext`). */
  webhookSignature: 'webhook-signature',
} as const;
export type SecretPurpose = (typeof SECRET_PURPOSES)[keyof typeof SECRET_PURPOSES];

/** The context key that carries the purpose. */
export const SECRET_PURPOSE_KEY = 'purpose';
