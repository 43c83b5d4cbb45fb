/**
 * GitLab webhooks, proven from GitLab's documentation (no verifying library): the secret token
 * set on the webhook comes back verbatim in `X-Gitlab-Token`.
 * https://docs.gitlab.com/user/project/integrations/webhooks/#create-a-webhook ("Secret token")
 */
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** The catalog's `gitlab` row. */
const GITLAB = rowOf('gitlab');
const TOKEN = 'my-gitlab-webhook-token';
const BODY = JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', project: { path_with_namespace: 'group/project' } });
const HEADERS = { 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Token': TOKEN, 'X-Gitlab-Instance': 'https://gitlab.com' };

const verify = (headers: Record<string, string>, secrets = [TOKEN], body = BODY) => verifySender(GITLAB, contextFor({ body, headers, secrets }));

describe('gitlab: X-Gitlab-Token as GitLab documents it', () => {
  it('a genuine push hook passes', async () => expect(await verify(HEADERS)).toBe(true));
  it('another token fails', async () => expect(await verify({ ...HEADERS, 'X-Gitlab-Token': 'guess' })).toBe(false));
  it('a missing X-Gitlab-Token fails', async () => expect(await verify({ 'X-Gitlab-Event': 'Push Hook' })).toBe(false));
  it('a changed body still passes: the token authenticates GitLab, it does not sign the body', async () =>
    expect(await verify(HEADERS, [TOKEN], '{}')).toBe(true));
  it('token rotation: either of two passes', async () => expect(await verify(HEADERS, ['old-token', TOKEN])).toBe(true));
  it('checkSenderSecret accepts the secret token', () => expect(checkSenderSecret(GITLAB, TOKEN)).toBeUndefined());
});
