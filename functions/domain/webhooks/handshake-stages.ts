/**
 * When a kind is checked: `get` and `get_signed` handshakes are the only GETs a trigger answers,
 * the second only once the request verified as its sender's (Okta sends its auth header);
 * `unsigned` POSTs come before signature verification (the sender does not sign them); `signed`
 * POSTs only after the request verified as its sender's.
 */
export type HandshakeStage = 'get' | 'get_signed' | 'unsigned' | 'signed';

/**
 * Each handshake's stage, apart from its answer (`handshakes.ts`): the receiver reads this on every
 * delivery, and loads the answers only when a request is at a stage its trigger's sender answers.
 * Its keys are the handshake kinds: `handshakes.ts` answers each of them, and no other.
 */
export const HANDSHAKE_STAGES = {
  slack_url_verification: 'signed',
  zoom_url_validation: 'signed',
  twitch_callback_verification: 'signed',
  discord_ping: 'signed',
  aws_sns_subscription: 'signed',
  microsoft_graph_validation: 'unsigned',
  asana_hook_secret: 'unsigned',
  notion_verification: 'unsigned',
  woocommerce_ping: 'unsigned',
  meta_subscribe: 'get',
  dropbox_challenge: 'get',
  x_crc: 'get',
  okta_verification: 'get_signed',
} as const satisfies Record<string, HandshakeStage>;

/** A handshake the receiver answers itself, as a catalog row names it (`handshake_answer`). */
export type HandshakeKindName = keyof typeof HANDSHAKE_STAGES;

/** The stage `kind` is answered at. */
export const handshakeStage = (kind: HandshakeKindName | undefined): HandshakeStage | undefined => (kind === undefined ? undefined : HANDSHAKE_STAGES[kind]);
