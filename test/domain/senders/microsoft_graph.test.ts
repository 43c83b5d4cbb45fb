/**
 * Microsoft Graph change notifications, proven from Microsoft's documentation (no verifying
 * library for plain notifications): each notification in `value[]` carries the `clientState` given
 * when the subscription was created, and the receiver must check it on every one.
 * https://learn.microsoft.com/graph/change-notifications-delivery-webhooks#notification-payload
 * The payload below is the documentation's example, `secretClientValue` included.
 */
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** The catalog's `microsoft_graph` row. */
const GRAPH = rowOf('microsoft_graph');
const CLIENT_STATE = 'secretClientValue';
const notification = (clientState: string | undefined, id = 'lsgTZMr9KwAAA') => ({
  id,
  subscriptionId: '{subscription_guid}',
  subscriptionExpirationDateTime: '2016-03-19T22:11:09.952Z',
  ...(clientState === undefined ? {} : { clientState }),
  changeType: 'created',
  resource: 'users/{user_guid}@{tenant_guid}/messages/{long_id_string}',
  tenantId: '84bd8158-6d4d-4958-8b9f-9d6445542f95',
  resourceData: { '@odata.type': '#Microsoft.Graph.Message', '@odata.id': 'Users/{user_guid}@{tenant_guid}/Messages/{long_id_string}', '@odata.etag': 'W/"CQAAABYAAADkrWGo7bouTKlsgTZMr9KwAAAUWRHf"', id: '{long_id_string}' },
});

const verify = (body: unknown, secrets = [CLIENT_STATE]) => verifySender(GRAPH, contextFor({ body: JSON.stringify(body), secrets }));

describe('microsoft_graph: clientState in every notification', () => {
  it("the documentation's notification passes", async () => expect(await verify({ value: [notification(CLIENT_STATE)] })).toBe(true));
  it('another clientState fails', async () => expect(await verify({ value: [notification('guess')] })).toBe(false));
  it('a notification without clientState fails', async () => expect(await verify({ value: [notification(undefined)] })).toBe(false));
  it('a batch with one forged notification beside a genuine one fails', async () =>
    expect(await verify({ value: [notification(CLIENT_STATE), notification('forged', 'other')] })).toBe(false));
  it('a changed body with the same clientState passes: clientState authenticates the subscription, it does not sign the body', async () =>
    expect(await verify({ value: [{ ...notification(CLIENT_STATE), changeType: 'deleted' }] })).toBe(true));
  it('checkSenderSecret accepts the clientState', () => expect(checkSenderSecret(GRAPH, CLIENT_STATE)).toBeUndefined());
  it('clientState rotation (a subscription renewed with a new value): either passes', async () =>
    expect(await verify({ value: [notification('old-state'), notification(CLIENT_STATE, 'other')] }, ['old-state', CLIENT_STATE])).toBe(true));
});
