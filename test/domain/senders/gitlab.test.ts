/**
 * GitLab webhooks, proven from GitLab's documentation (no verifying library): the secret token
 * set on the webhook comes back verbatim in `X-Gitlab-Token`.
 * https://docs.gitlab.com/user/project/integrations/webhooks/#create-a-webhook ("Secret token")
 */
import { describe, expect, it } from 'vitest';
import { verifyStaticToken, type StaticTokenParams } from '../../../functions/domain/webhooks/senders/primitives/token.js';
import { contextFor } from '../../support/verify-context.js';

/** The parameters of the `gitlab` catalog row. */
const GITLAB: StaticTokenParams = { location: 'header', header: 'x-gitlab-token' };
const TOKEN = 'my-gitlab-webhook-token';
const BODY = JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', project: { path_with_namespace: 'group/project' } });
const HEADERS = { 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Token': TOKEN, 'X-Gitlab-Instance': 'https://gitlab.com' };

const verify = (headers: Record<string, string>, secrets = [TOKEN], body = BODY) => verifyStaticToken(GITLAB, contextFor({ body, headers, secrets }));

describe('gitlab: X-Gitlab-Token as GitLab documents it', () => {
  it('a genuine push hook passes', () => expect(verify(HEADERS)).toBe(true));
  it('another token fails', () => expect(verify({ ...HEADERS, 'X-Gitlab-Token': 'guess' })).toBe(false));
  it('a missing X-Gitlab-Token fails', () => expect(verify({ 'X-Gitlab-Event': 'Push Hook' })).toBe(false));
  it('a changed body still passes: the token authenticates GitLab, it does not sign the body', () => expect(verify(HEADERS, [TOKEN], '{}')).toBe(true));
  it('token rotation: either of two passes', () => expect(verify(HEADERS, ['old-token', TOKEN])).toBe(true));
});
