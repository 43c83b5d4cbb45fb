import type { HandshakeKindName } from '../handshakes.js';
import { isLive } from '../../triggers/overlap.js';
import type { StoredSignature, TriggerRecord } from '../../triggers/trigger.js';
import type { SenderRow } from '../senders/catalog-types.js';
import type { ActiveTrigger } from '../trigger-lookup.js';

/**
 * The sender catalog (about 21 KB) loads with the first delivery to a trigger with a signature,
 * as the KMS client that opens its secret does: 404s, 405s and unsigned triggers never need it.
 */
let catalog: Promise<typeof import('../senders/catalog.js')> | undefined;

/** The catalog row a trigger's signature is verified by: the sender's, or `custom` with the trigger's own settings. */
export async function senderRowOf(signature: StoredSignature): Promise<SenderRow | undefined> {
  return (await (catalog ??= import('../senders/catalog.js'))).rowOfSignature(signature);
}

/** The row of a trigger's sender; undefined for a trigger without a signature. */
export const rowOfTrigger = async (record: TriggerRecord): Promise<SenderRow | undefined> => (record.signature ? senderRowOf(record.signature) : undefined);

/**
 * The handshake a trigger's sender makes, which the receiver answers itself: its catalog row's,
 * or, for a trigger without a signature, Slack's URL challenge (answered so from the start).
 */
export async function handshakeKindOf(record: TriggerRecord): Promise<HandshakeKindName | undefined> {
  if (!record.signature) return 'slack_url_verification';
  return (await senderRowOf(record.signature))?.handshake_answer;
}

/** The signing secrets, or none for a trigger without a signature. */
export const signingSecretsOrNone = (trigger: ActiveTrigger, now: Date): string[] => (trigger.signingSecret === undefined ? [] : signingSecrets(trigger, now));

/** The secrets a signature may be made with now: the current one, and the replaced one while its overlap lasts. */
export function signingSecrets(trigger: ActiveTrigger, now: Date): string[] {
  const previousLive = trigger.previousSigningSecret !== undefined && isLive(trigger.record.signature?.previous_secret_expires_at, now);
  return previousLive ? [trigger.signingSecret!, trigger.previousSigningSecret!] : [trigger.signingSecret!];
}
