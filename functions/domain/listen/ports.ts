import type { ExecutionRef, ForwardedAttempt } from '../flows/ports.js';

/** A listener's answer the sender of a wait-mode delivery gets (the trigger's `answer_from_listener`). */
export interface ListenerAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
}

/**
 * The receiver's side of `flowgate listen`: told of every delivery once its record is durable, and
 * asked for a listener's answer when its trigger answers from a listener.
 */
export interface DeliveryListeners {
  /**
   * A delivery's record was written: push it to the trigger's listeners. Never rejects. Locally it
   * resolves at once (the push goes on); deployed, once the push is posted (Lambda freezes after the answer).
   */
  recorded(ref: ExecutionRef): Promise<void>;
  /**
   * The first answer a listener of `ref`'s trigger gives within `withinMs`; undefined at once when
   * no listener is connected, or as soon as the last one is gone or could not reach its server.
   */
  answer(ref: ExecutionRef, withinMs: number): Promise<ListenerAnswer | undefined>;
}

/** Where a listener's local answer is recorded on its delivery, beside (never instead of) the flow's run. */
export interface ForwardedAttempts {
  /** Appends `attempt` to the delivery's `forwarded` list; false when there is no such delivery (or it has the most it keeps). */
  add(ref: ExecutionRef, attempt: ForwardedAttempt): Promise<boolean>;
}
