/**
 * Flow function `summarize`: what a flow was given, in brief. Its input is the flow's input,
 * `{"trigger": {...}}` (see the README), as the `summarize` flow passes it.
 */
interface FlowInput {
  trigger?: { type?: unknown; event_id?: unknown; event?: unknown };
}

export interface Summary {
  type: string | null;
  event_id: string | null;
  /** The event's top-level keys, sorted; none when the event is not a JSON object. */
  keys: string[];
  /** Size in bytes of the event as JSON. */
  bytes: number;
}

export function summarize(input: FlowInput): Summary {
  const trigger = input?.trigger ?? {};
  const event = trigger.event ?? null;
  const isObject = typeof event === 'object' && event !== null && !Array.isArray(event);
  return {
    type: typeof trigger.type === 'string' ? trigger.type : null,
    event_id: typeof trigger.event_id === 'string' ? trigger.event_id : null,
    keys: isObject ? Object.keys(event).sort() : [],
    bytes: new TextEncoder().encode(JSON.stringify(event)).length,
  };
}

export const handler = async (input: FlowInput): Promise<Summary> => summarize(input);
