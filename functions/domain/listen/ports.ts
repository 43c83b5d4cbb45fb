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
  /** A delivery's record was written: push it to the trigger's listeners. Never rejects; resolves once the pushes are posted (Lambda freezes after its answer). */
  recorded(ref: ExecutionRef): Promise<void>;
  /**
   * The first answer a listener of `ref`'s trigger gives within `withinMs`; undefined at once when
   * the delivery reached no listener, or as soon as every listener it reached is gone or could not
   * reach its server.
   */
  answer(ref: ExecutionRef, withinMs: number): Promise<ListenerAnswer | undefined>;
}

/**
 * Where a listener's answer waits for the receiver of its delivery (the trigger's
 * `answer_from_listener`): the listen endpoint keeps it, the receiver reads it (`DeliveryListeners.answer`).
 */
export interface ListenerAnswers {
  /**
   * Keeps `answer` for the sender of `ref`; false when another listener's answer was kept first.
   * `undefined`: this listener could not reach its local server (counted, so the receiver stops
   * waiting once every listener it pushed to failed); it answers false.
   */
  keep(ref: ExecutionRef, answer: ListenerAnswer | undefined): Promise<boolean>;
}

/** Where a listener's local answer is recorded on its delivery, beside (never instead of) the flow's run. */
export interface ForwardedAttempts {
  /** Appends `attempt` to the delivery's `forwarded` list; false when there is no such delivery (or it has the most it keeps). */
  add(ref: ExecutionRef, attempt: ForwardedAttempt): Promise<boolean>;
}

/**
 * The replay reads of each account per clock hour (`MAX_REPLAY_READS_PER_HOUR`), counted where every
 * connection of the account sees the same count, so that asking again, or connecting again, does
 * not start it afresh.
 */
export interface ReplayBudget {
  /** Takes up to `wanted` reads of `accountId`'s `hour` (epoch hours) out of `max`; answers how many it may make (0: none left). */
  take(accountId: string, hour: number, wanted: number, max: number): Promise<number>;
  /** Gives back reads taken but not made. */
  giveBack(accountId: string, hour: number, count: number): Promise<void>;
}
