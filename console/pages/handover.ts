/**
 * A handshake sender's handover on the Triggers page (Asana, Notion hand the signing secret over in
 * an unsigned handshake): when and from which address it came, or until when one is awaited, and
 * "Reject and wait again" (`POST /triggers/{id}/await-handshake`), which forgets the secret and
 * takes the next handover within the window. The owner checks the time and address against when
 * they created the subscription: anyone with the URL could have sent one.
 */
import { api } from '../api.js';
import { el, openDialog } from '../dom.js';
import type { Signature } from './signature-fields.js';

const when = (iso: string) => new Date(iso).toLocaleString();

/** What the handover row says; undefined for a signature whose secret is pasted. */
export function handoverSummary(signature: Signature | null, nowMs = Date.now()): string | undefined {
  if (!signature || signature.handshake_window_seconds === undefined) return undefined;
  if (signature.handed_over_at) return `Secret handed over by the handshake on ${when(signature.handed_over_at)} from ${signature.handed_over_source_ip ?? 'an unknown address'}.`;
  const until = signature.handshake_awaited_until;
  if (!until) return undefined;
  return Date.parse(until) > nowMs
    ? `Awaiting the sender's handshake until ${when(until)}.`
    : `No handshake came before ${when(until)}: the trigger has no secret and refuses every delivery.`;
}

/** The button that forgets the handed-over secret and opens the window again; undefined when there is nothing to reject or wait for. */
export function rejectHandoverButton(options: { triggerId: string; flow: string; signature: Signature | null; done: (message: string) => Promise<void> }): HTMLElement | undefined {
  const { signature } = options;
  if (!signature || signature.handshake_window_seconds === undefined || (!signature.handed_over_at && !signature.handshake_awaited_until)) return undefined;
  const label = signature.handed_over_at ? 'Reject and wait again' : 'Wait again';
  const button = el('button', { type: 'button', class: 'secondary', 'aria-label': `${label} (${options.flow} trigger)` }, label);
  const minutes = Math.round(signature.handshake_window_seconds / 60);
  button.addEventListener('click', () => openDialog({
    title: signature.handed_over_at ? 'Reject the handed-over secret?' : 'Wait for the handshake again?',
    content: [el('p', {}, `The trigger for ${options.flow} forgets its secret and takes the next handshake's for ${minutes} minute${minutes === 1 ? '' : 's'}. `
      + 'Until then every delivery is refused: re-create the subscription in the sender now.')],
    confirm: label,
    opener: button,
    action: async () => {
      const changed = await api<{ signature: Signature }>('POST', `/triggers/${encodeURIComponent(options.triggerId)}/await-handshake`);
      await options.done(`The ${options.flow} trigger awaits its sender's handshake until ${when(changed.signature.handshake_awaited_until!)}.`);
    },
  }));
  return button;
}
