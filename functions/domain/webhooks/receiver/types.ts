import type { Clock } from '../../clock.js';
import type { EventQueue, ExecutionRef, ExecutionStore, FlowRunner } from '../../flows/ports.js';
import type { Handover } from '../../triggers/manage-triggers.js';
import type { TriggerRecord } from '../../triggers/trigger.js';
import type { RefusalGate } from '../refusal-budget.js';
import type { SecretLocations } from '../secret-fields.js';
import type { KeyFetcher } from '../senders/context.js';
import type { DeliveryListeners } from '../../listen/ports.js';
import type { TriggerLookup } from '../trigger-lookup.js';

export interface IncomingWebhook {
  webhookId: string;
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  query: Record<string, string>;
  rawBody: Uint8Array;
  /** The URL the sender called, as it called it (Twilio signs it). */
  publicUrl: string;
  /**
   * The client address API Gateway saw (`requestContext.http.sourceIp`), never a header the client
   * could write such as `X-Forwarded-For`. Without it, an allowlist lets nothing in.
   */
  sourceIp?: string;
  /** Epoch ms by which a wait-mode answer must be sent (see `wait-budget.ts`). */
  answerByMs?: number;
}

/** The receiver's answer: JSON (`body`), or text or bytes as they are (`raw`), with its own headers. */
export interface WebhookReply {
  status: number;
  body?: unknown;
  raw?: { body: string; isBase64Encoded: boolean };
  headers?: Record<string, string>;
}

export interface ReceiverDeps {
  triggers: TriggerLookup;
  executions: ExecutionStore;
  queue: EventQueue;
  flows: FlowRunner;
  now: Clock;
  newId: () => string;
  /** Which refused deliveries are recorded (`refusal-budget.ts`); one per receiver, so its count lasts. */
  refusals: RefusalGate;
  maxBodyBytes: number;
  waitTimeoutMs: number;
  /** Senders' published keys (certificates, JWKS), fetched only from the hosts their catalog rows allow. */
  keys: KeyFetcher;
  /**
   * Seals and keeps `secret` as the trigger's signing secret, handed over by its sender's handshake
   * (Asana, Notion), with when and from where; refused when the trigger has one already (another
   * handshake got there first) or awaits none (its window, `handshake-window.ts`, has closed).
   */
  adoptSecret(record: TriggerRecord, secret: string, options: { revealOnce: boolean; sourceIp?: string }): Promise<Handover>;
  /** Listeners (`flowgate listen`) a wait-mode trigger with `answer_from_listener` takes its answer from (`websocket-listeners.ts`). */
  listeners?: Pick<DeliveryListeners, 'answer'>;
  /** When this receiver started (epoch ms): a delivery signed before it may have been claimed by an older version (`claim-record.ts`). */
  startedAtMs?: number;
}

/** A request admitted to a known, enabled trigger: what every later stage records against. */
export interface Delivery {
  trigger: TriggerRecord;
  receivedAt: Date;
  ref: ExecutionRef;
  /** Where its sender carries a secret in clear: never stored, never handed to the flow. */
  secrets: SecretLocations;
}

/**
 * An answer of the receiver's own (accepted, ignored, duplicate): the trigger's fixed
 * `acknowledge_response` when it has one, else the JSON it always was.
 */
export function ownAnswer(record: TriggerRecord, body: Record<string, unknown>): WebhookReply {
  const fixed = record.acknowledge_response;
  if (!fixed) return { status: 200, body };
  return { status: fixed.status_code, raw: { body: fixed.body, isBase64Encoded: false }, headers: fixed.content_type === undefined ? {} : { 'content-type': fixed.content_type } };
}
