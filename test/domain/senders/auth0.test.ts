/**
 * Auth0 custom-webhook log streams, proven from Auth0's documentation (no verifying library): the
 * optional "Authorization Token" set on the stream is sent as the `Authorization` header value,
 * exactly as entered (so the user pastes exactly that value, `Bearer …` included if they typed it).
 * https://auth0.com/docs/customize/log-streams/custom-log-streams
 */
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** The catalog's `auth0` row. */
const AUTH0 = rowOf('auth0');
const TOKEN = 'Bearer my-auth0-log-stream-token';
const BODY = JSON.stringify([{ log_id: '90020230101000000000000000000000000000000000000000000000', data: { type: 's', description: 'Success Login' } }]);

const verify = (headers: Record<string, string>, secrets = [TOKEN], body = BODY) => verifySender(AUTH0, contextFor({ body, headers, secrets }));

describe('auth0: the Authorization value of a log stream', () => {
  it('a genuine batch passes', async () => expect(await verify({ Authorization: TOKEN })).toBe(true));
  it('another token fails, as does the token without the text around it', async () => {
    expect(await verify({ Authorization: 'Bearer guess' })).toBe(false);
    expect(await verify({ Authorization: 'my-auth0-log-stream-token' })).toBe(false);
  });
  it('a missing Authorization fails', async () => expect(await verify({})).toBe(false));
  it('a changed body still passes: the header authenticates Auth0, it does not sign the body', async () =>
    expect(await verify({ Authorization: TOKEN }, [TOKEN], '[]')).toBe(true));
  it('token rotation: either of two passes', async () => expect(await verify({ Authorization: TOKEN }, ['Bearer old', TOKEN])).toBe(true));
  it('checkSenderSecret accepts the token as entered, Bearer included', () => expect(checkSenderSecret(AUTH0, TOKEN)).toBeUndefined());
});
