import type { HandshakeKindName } from './handshakes.js';

/** Each handshake in words, for the OpenAPI document and the senders guide (`bin/senders-table.ts`). */
export const HANDSHAKE_WORDS: { readonly [K in HandshakeKindName]: string } = {
  slack_url_verification: 'a signed `url_verification` POST gets `{"challenge"}`',
  zoom_url_validation: 'a signed `endpoint.url_validation` POST gets `{"plainToken", "encryptedToken"}` (hex HMAC-SHA256 of the token under the secret)',
  twitch_callback_verification: 'a signed `webhook_callback_verification` POST gets its `challenge` as `text/plain`',
  discord_ping: 'a signed interactions PING (`{"type":1}`) gets `{"type":1}`, a webhook-events PING (`{"type":0}`) 204',
  microsoft_graph_validation: 'a POST with `?validationToken=` gets the token as `text/plain`',
  woocommerce_ping: 'the unsigned creation ping (form `webhook_id=<n>`) gets an empty 200',
  aws_sns_subscription: 'a signed `SubscriptionConfirmation` is confirmed by a GET of its `SubscribeURL` (only on an SNS host, as certificates are); an `UnsubscribeConfirmation` is recorded, not followed',
  asana_hook_secret: 'the first POST with `X-Hook-Secret`, while the trigger has no secret and within its `handshake_window_seconds` (default 600) of being set up or re-armed (`POST /triggers/{id}/await-handshake`), gets 200 echoing that header, and the value becomes the trigger\'s signing secret, sealed, with when and from which address it came; after the window it is 401 and recorded refused',
  notion_verification: 'the POST with `verification_token`, while the trigger has no secret and within its handshake window (as Asana\'s), gets 200, and the token becomes the trigger\'s signing secret, sealed; the next read of the trigger (API or console) shows it to the owner once, to paste back into Notion, and the delivery keeps no body',
  meta_subscribe: 'a GET with `hub.mode=subscribe` and `hub.verify_token` equal to the trigger\'s `signature.verify_token` (required; never the app secret) gets `hub.challenge` (a wrong token, or a trigger from before it was required, is 401)',
  dropbox_challenge: 'a GET with `?challenge=` gets it back as `text/plain`',
  x_crc: 'a GET with `?crc_token=` of X\'s shape (8 to 255 letters, digits and `+/_-`, `=` only as padding at the end) gets `{"response_token": "sha256=<base64 HMAC-SHA256 under the secret>"}`',
  okta_verification: 'a GET with `X-Okta-Verification-Challenge`, once its auth header verifies, gets `{"verification"}`',
};
