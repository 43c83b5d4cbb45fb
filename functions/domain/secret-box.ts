/**
 * Encryption of secrets at rest (TOTP secrets, signing secrets). `context` binds a ciphertext to
 * its owner (e.g. `{ account_id, purpose }`), so a sealed value copied to another record will not open.
 */
export interface SecretBox {
  seal(plaintext: string, context: Record<string, string>): Promise<string>;
  open(sealed: string, context: Record<string, string>): Promise<string>;
}
