/**
 * Flow function `notify`: POSTs `{"text": "..."}` naming the event's type and id to `NOTIFY_URL`
 * (a Slack incoming webhook, say). Deployed, `NOTIFY_URL` comes from CDK context `notifyUrl`;
 * locally from the `NOTIFY_URL` the local stack is given (`NOTIFY_URL=... npm start`), through
 * `createHandler`, so two local stacks in one process can notify different places.
 *
 * Anything but a 2xx answer, a timeout or a network error throws `NotifyFailed`: the flow's `Retry`
 * tries once more, and a flow that still fails is retried like any failed flow.
 */

/** Slack answers in well under a second; a receiver slower than this is treated as down. */
export const NOTIFY_TIMEOUT_MS = 5_000;

interface FlowInput {
  trigger?: { type?: unknown; event_id?: unknown };
}

/** The error the flow retries on; Step Functions sees its `name` as the Task's error. */
export class NotifyFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotifyFailed';
  }
}

export function notifyText(input: FlowInput): string {
  const type = typeof input?.trigger?.type === 'string' ? input.trigger.type : 'an event';
  const id = typeof input?.trigger?.event_id === 'string' ? input.trigger.event_id : 'unknown';
  return `Flowgate received ${type} (event ${id})`;
}

/** The handler for the settings given (`NOTIFY_URL`); checked on each call, so a missing one fails the flow, naming it. */
export function createHandler(settings: Readonly<Record<string, string | undefined>>) {
  const url = settings.NOTIFY_URL;
  return async (input: FlowInput): Promise<{ notified: true; status: number }> => {
    if (!url || !/^https?:\/\//.test(url)) throw new NotifyFailed('NOTIFY_URL is not set to an http(s) URL (context notifyUrl when deployed)');
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: notifyText(input) }),
        signal: AbortSignal.timeout(NOTIFY_TIMEOUT_MS),
      });
    } catch (error) {
      throw new NotifyFailed(`POST to NOTIFY_URL failed: ${(error as Error).name}`);
    }
    await response.body?.cancel();
    if (!response.ok) throw new NotifyFailed(`NOTIFY_URL answered ${response.status}`);
    return { notified: true, status: response.status };
  };
}

export const handler = createHandler(process.env);
