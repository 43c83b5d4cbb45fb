/**
 * Telegram bot webhooks, proven from the Bot API documentation (no verifying library): the
 * `secret_token` given to setWebhook is sent in `X-Telegram-Bot-Api-Secret-Token` with every update.
 * https://core.telegram.org/bots/api#setwebhook
 */
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** The catalog's `telegram` row. */
const TELEGRAM = rowOf('telegram');
/** setWebhook allows 1-256 characters of A-Z, a-z, 0-9, _ and -. */
const TOKEN = 'My_Secret-Token_0123456789';
const BODY = JSON.stringify({ update_id: 10000, message: { message_id: 1365, date: 1441645532, chat: { id: 1111111, type: 'private' }, text: '/start' } });

const verify = (headers: Record<string, string>, secrets = [TOKEN], body = BODY) => verifySender(TELEGRAM, contextFor({ body, headers, secrets }));

describe('telegram: X-Telegram-Bot-Api-Secret-Token as the Bot API documents it', () => {
  it('a genuine update passes', async () => expect(await verify({ 'X-Telegram-Bot-Api-Secret-Token': TOKEN })).toBe(true));
  it('another token fails', async () =>
    expect(await verify({ 'X-Telegram-Bot-Api-Secret-Token': 'My_Secret-Token_012345678' })).toBe(false));
  it('a missing header fails', async () => expect(await verify({})).toBe(false));
  it('a changed body still passes: the token authenticates Telegram, it does not sign the body', async () =>
    expect(await verify({ 'X-Telegram-Bot-Api-Secret-Token': TOKEN }, [TOKEN], '{"update_id":1}')).toBe(true));
  it('token rotation: either of two passes', async () =>
    expect(await verify({ 'X-Telegram-Bot-Api-Secret-Token': TOKEN }, ['Old_Token', TOKEN])).toBe(true));
  it("a token in setWebhook's alphabet is accepted as a secret", () => expect(checkSenderSecret(TELEGRAM, TOKEN)).toBeUndefined());
});
