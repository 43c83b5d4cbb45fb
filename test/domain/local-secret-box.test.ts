import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LocalSecretBox } from '../../functions/adapters/local-secret-box.js';

const box = new LocalSecretBox(randomBytes(32).toString('base64'));
const context = { account_id: 'acct-1', purpose: 'totp' };

describe('LocalSecretBox', () => {
  it('open(seal(x)) returns x and the sealed form does not contain it', async () => {
    const sealed = await box.seal('JBSWY3DPEHPK3PXP', context);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(await box.open(sealed, context)).toBe('JBSWY3DPEHPK3PXP');
  });

  it('refuses to open under another context', async () => {
    const sealed = await box.seal('secret', context);
    await expect(box.open(sealed, { ...context, account_id: 'acct-2' })).rejects.toThrow();
  });

  it('refuses a tampered ciphertext', async () => {
    const sealed = await box.seal('secret', context);
    const raw = Buffer.from(sealed.slice('local:v1:'.length), 'base64');
    raw[raw.length - 1]! ^= 1;
    await expect(box.open('local:v1:' + raw.toString('base64'), context)).rejects.toThrow();
  });

  it('refuses a key of the wrong size', () => {
    expect(() => new LocalSecretBox(randomBytes(16).toString('base64'))).toThrow();
  });
});
