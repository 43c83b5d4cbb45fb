/**
 * What the trigger form says of the chosen sender's deliveries, all from the API's catalog
 * (`GET /signature-services`): how long the sender waits for an answer and for how long it
 * retries; a warning when a wait-mode trigger's flow may take longer than the sender waits (it
 * then counts the delivery failed and sends it again); the `split_batches` choice for a sender
 * whose one POST carries several events; and its event names as the event filter's suggestions.
 */
import { api } from '../api.js';
import { checkbox, el } from '../dom.js';
import type { DeliveryPolicy, SignatureServiceListing } from '../../functions/domain/webhooks/senders/listing-types.js';

/** A span of seconds in words: 3 s, 6 min, 27.6 h, 3 days. */
export function span(seconds: number): string {
  const round = (value: number) => String(Math.round(value * 10) / 10);
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 2 * 3600) return `${round(seconds / 60)} min`;
  if (seconds < 72 * 3600) return `${round(seconds / 3600)} h`;
  return `${round(seconds / 86_400)} days`;
}

/** The sender's time-out and retry window in a sentence, then its schedule in its own words. */
export function policyText(name: string, policy: DeliveryPolicy): string {
  const waits = policy.timeout_seconds === null ? `${name}'s delivery time-out is not documented` : `${name} waits ${span(policy.timeout_seconds)} for an answer`;
  const retries = policy.retry_window_seconds === null ? 'its retry window is not documented'
    : policy.retry_window_seconds === 0 ? 'it does not retry by itself' : `it retries for up to ${span(policy.retry_window_seconds)}`;
  return `${waits}; ${retries}. ${policy.retries}${policy.unconfirmed ? ' (Some of these figures are unconfirmed.)' : ''}`;
}

/** Each flow's wait limit in wait mode (`GET /flows/{name}`), read once a page load. */
const waitLimits = new Map<string, Promise<number>>();
function waitLimitOf(flow: string): Promise<number> {
  let limit = waitLimits.get(flow);
  if (!limit) {
    limit = api<{ wait_limit_seconds: number }>('GET', `/flows/${encodeURIComponent(flow)}`).then((answer) => answer.wait_limit_seconds);
    limit.catch(() => waitLimits.delete(flow)); // a failed read is tried again next time
    waitLimits.set(flow, limit);
  }
  return limit;
}

export interface SenderDeliveryFields {
  /** The sender's time-out and retries, and the wait-mode warning: shown once a sender is chosen. */
  timing: HTMLElement;
  /** The `split_batches` checkbox: shown for a sender that batches. */
  splitRow: HTMLElement;
  splitBatches(): boolean;
  /** The event filter's suggestions (a datalist the filter names), to place in the form. */
  suggestions: HTMLDataListElement;
  /** Reads the sender, the response mode and the flow again. */
  update(): void;
}

/** Id of the event filter's suggestions. */
const NAMES_LIST_ID = 'event-filter-names';

/**
 * The sender-dependent parts of the trigger form. `filter` is given the sender's event names as
 * suggestions for the name being typed (after the last comma, so several can be picked).
 */
export function senderDeliveryFields(options: {
  sender: () => SignatureServiceListing | undefined;
  mode: HTMLSelectElement;
  flow: HTMLSelectElement;
  filter: HTMLInputElement;
  splitBatches: boolean | undefined;
}): SenderDeliveryFields {
  const { sender, mode, flow, filter } = options;
  const policy = el('p', { class: 'hint', id: 'sender-delivery-policy' });
  const warning = el('p', { class: 'warning', role: 'status', hidden: true });
  const timing = el('div', { class: 'sender-delivery', hidden: true }, policy, warning);
  const [splitRow, split] = checkbox('split-batches', 'Split batches: one event per element of a POST', options.splitBatches !== false);
  const splitHint = el('p', { class: 'hint' });
  const splitPart = el('div', { hidden: true }, splitRow, splitHint);

  const names = el('datalist', { id: NAMES_LIST_ID });
  filter.setAttribute('list', NAMES_LIST_ID);
  /** Suggestions complete the name after the last comma, keeping what comes before it. */
  const suggest = () => {
    const chosen = sender()?.event_names?.names ?? [];
    const cut = filter.value.lastIndexOf(',');
    const before = cut < 0 ? '' : `${filter.value.slice(0, cut + 1)} `;
    const typed = filter.value.slice(cut + 1).trim();
    const picked = new Set(filter.value.split(',').map((s) => s.trim()));
    names.replaceChildren(...chosen.filter((name) => name.startsWith(typed) && (name === typed || !picked.has(name)))
      .map((name) => el('option', { value: `${before}${name}` })));
  };
  filter.addEventListener('input', suggest);

  let shownFor = '';
  /** The warning, when the flow may run longer in wait mode than the sender waits. */
  const warn = (chosen: SignatureServiceListing | undefined) => {
    const timeout = chosen?.delivery_policy.timeout_seconds;
    const key = `${chosen?.id}|${mode.value}|${flow.value}`;
    shownFor = key;
    if (!chosen || timeout == null || mode.value !== 'wait' || !flow.value) {
      warning.hidden = true;
      return;
    }
    void waitLimitOf(flow.value).then((limit) => {
      if (shownFor !== key) return;
      warning.hidden = limit <= timeout;
      warning.textContent = warning.hidden ? '' : `${chosen.name} gives up after ${span(timeout)}, but in wait mode this trigger may wait up to ${span(limit)} for ${flow.value}: ` +
        `a slower answer reaches ${chosen.name} too late, and it counts the delivery failed and may send it again. ` +
        `Acknowledge at once instead, or give the flow a TimeoutSeconds of at most ${timeout}.`;
    }, () => {
      warning.hidden = true;
    });
  };

  const update = () => {
    const chosen = sender();
    timing.hidden = !chosen;
    policy.textContent = chosen ? policyText(chosen.name, chosen.delivery_policy) : '';
    splitPart.hidden = !chosen?.batch;
    splitHint.textContent = chosen?.batch ? `${chosen.name} sends several events in one POST. Unticked, the flow gets the whole POST as one event, which an event filter cannot see into.` : '';
    warn(chosen);
    suggest();
  };
  mode.addEventListener('change', update);
  flow.addEventListener('change', update);

  return { timing, splitRow: splitPart, splitBatches: () => split.checked, suggestions: names, update };
}
