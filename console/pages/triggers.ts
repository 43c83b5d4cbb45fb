/** The Triggers page: list, create, edit, enable or disable, regenerate URL and API key, rotate the signing secret, reject a handshake's secret, delete. */
import { api } from '../api.js';
import type { Bar } from './chart-layout.js';
import { activityCell, lastDayActivity } from './charts.js';
import { deliveriesHash } from './deliveries.js';
import { flowLink, flowPreview } from './flow.js';
import { handoverSummary, rejectHandoverButton } from './handover.js';
import { fixedAnswerFields, fixedAnswerSummary, type AcknowledgeResponse } from './fixed-answer.js';
import { senderDeliveryFields } from './sender-delivery.js';
import { signatureFields, type Signature } from './signature-fields.js';
import { actionButton, alertRegion, checkbox, copyButton, el, field, openDialog, pageHeading, select, textInput, withProgress } from '../dom.js';

export interface Trigger {
  id: string;
  url: string;
  /** Its own name, or its flow's when it has none (`name_is_default`; absent from an older API). */
  name?: string;
  name_is_default?: boolean;
  description?: string | null;
  flow: string;
  response_mode: 'acknowledge' | 'wait';
  event_filter: string[];
  api_key_enabled: boolean;
  signature: Signature | null;
  allowed_source_ips: string[] | null;
  enabled: boolean;
  deduplicate: boolean;
  /** A batching sender's POST becomes one event per element (the API's default). */
  split_batches?: boolean;
  /** Null (or absent, from an older API) for the default JSON answers. */
  acknowledge_response?: AcknowledgeResponse | null;
  api_key?: string;
}

/** What the page calls a trigger: its name (its flow's when it has none). */
export const triggerLabel = (t: Pick<Trigger, 'name' | 'flow'>): string => t.name ?? t.flow;

const RESPONSE_MODES = { acknowledge: 'Acknowledge at once', wait: "Wait for the flow's result" } as const;

/** How long a replaced API key or signing secret keeps working (the API allows up to 7 days). */
const OVERLAPS = [['0', 'No longer'], ['3600', '1 hour'], [String(24 * 3600), '24 hours'], [String(7 * 24 * 3600), '7 days']] as const;

const triggerPath = (trigger: Trigger, action = '') => `/triggers/${encodeURIComponent(trigger.id)}${action}`;
const list = (text: string) => text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);

export function triggersPage(): HTMLElement {
  const alert = alertRegion();
  const notice = el('div', { 'aria-live': 'polite' });
  const listing = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading triggers…'));
  const newButton = el('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': 'trigger-form' }, 'New trigger');
  const formSlot = el('div', { id: 'trigger-form' });

  const load = () => withProgress(listing, alert, async () => {
    const [{ triggers }, activity] = await Promise.all([api<{ triggers: Trigger[] }>('GET', '/triggers?limit=500'), lastDayActivity()]);
    listing.replaceChildren(triggers.length === 0 ? el('p', {}, 'No triggers yet.') : triggerTable(triggers, { alert, notice, reload: load, edit, activity }));
  });

  /** Opens the form for a new trigger (no `trigger`) or for changing one, in place of any open form. */
  function openForm(trigger: Trigger | undefined, opener: HTMLElement): void {
    newButton.setAttribute('aria-expanded', String(!trigger));
    const close = () => {
      newButton.setAttribute('aria-expanded', 'false');
      formSlot.replaceChildren();
    };
    formSlot.replaceChildren(triggerForm({
      trigger,
      onDone: (saved) => {
        close();
        notice.replaceChildren(savedNotice(saved, trigger ? 'changed' : 'created', alert));
        void load();
      },
      onCancel: () => {
        close();
        opener.focus();
      },
    }));
    formSlot.querySelector<HTMLElement>('#flow')?.focus();
  }
  function edit(trigger: Trigger, opener: HTMLElement): void {
    openForm(trigger, opener);
  }

  newButton.addEventListener('click', () => {
    if (newButton.getAttribute('aria-expanded') === 'true') {
      newButton.setAttribute('aria-expanded', 'false');
      formSlot.replaceChildren();
      return;
    }
    openForm(undefined, newButton);
  });
  void load();
  return el('main', {}, pageHeading('Triggers'), alert, notice, newButton, formSlot, el('h2', {}, 'Your triggers'), listing);
}

function savedNotice(trigger: Trigger, what: string, alert: HTMLElement): HTMLElement {
  return el('div', { class: 'notice' },
    el('p', {}, `${trigger.name_is_default === false ? `Trigger ${trigger.name} for ${trigger.flow}` : `Trigger for ${trigger.flow}`} ${what}. Its URL: `, el('code', {}, trigger.url)),
    trigger.api_key && apiKeyNotice(trigger.api_key, alert));
}

const apiKeyNotice = (key: string, alert: HTMLElement) =>
  el('p', {}, 'Its API key, shown this once only: ', el('code', {}, key), ' ', copyButton(key, alert, 'Copy API key'));

interface TableContext {
  alert: HTMLElement;
  notice: HTMLElement;
  reload: () => Promise<void>;
  edit: (trigger: Trigger, opener: HTMLElement) => void;
  /** Each trigger's last 24 hours, by hour (`charts.ts`). */
  activity: Map<string, Bar[]>;
}

function triggerTable(triggers: Trigger[], context: TableContext): HTMLElement {
  const { alert, notice, reload } = context;
  const rows = triggers.map((t) => {
    const editButton = el('button', { type: 'button', class: 'secondary' }, 'Edit');
    editButton.addEventListener('click', () => context.edit(t, editButton));
    const toggle = actionButton(t.enabled ? 'Disable' : 'Enable', alert, async () => {
      await api('PATCH', triggerPath(t), { enabled: !t.enabled });
      await reload();
    }, { class: 'secondary' });
    const regenerateUrl = el('button', { type: 'button', class: 'secondary' }, 'Regenerate URL');
    regenerateUrl.addEventListener('click', () => openDialog({
      title: 'Regenerate this URL?',
      content: [el('p', {}, `The trigger ${triggerLabel(t)} gets a new URL; the current one answers 404 at once. Senders must be given the new one.`)],
      confirm: 'Regenerate',
      opener: regenerateUrl,
      action: async () => {
        const changed = await api<Trigger>('POST', triggerPath(t, '/regenerate-url'));
        notice.replaceChildren(savedNotice(changed, 'has a new URL', alert));
        await reload();
      },
    }));
    const regenerateKey = t.api_key_enabled && el('button', { type: 'button', class: 'secondary' }, 'Regenerate API key');
    if (regenerateKey) {
      const overlap = select(OVERLAPS, '0');
      regenerateKey.addEventListener('click', () => openDialog({
        title: 'Regenerate the API key?',
        content: [
          el('p', {}, `The trigger ${triggerLabel(t)} gets a new API key, shown once.`),
          field(`key-overlap-${t.id}`, 'The current key keeps working', overlap, 'Give senders time to switch to the new key.'),
        ],
        confirm: 'Regenerate',
        opener: regenerateKey,
        action: async () => {
          const changed = await api<Trigger>('POST', triggerPath(t, '/regenerate-api-key'), { previous_key_expires_in_seconds: Number(overlap.value) });
          notice.replaceChildren(el('div', { class: 'notice' }, el('p', {}, `New API key for the ${triggerLabel(t)} trigger.`), changed.api_key && apiKeyNotice(changed.api_key, alert)));
          await reload();
        },
      }));
    }
    const rotate = t.signature && el('button', { type: 'button', class: 'secondary' }, 'Rotate signing secret');
    if (rotate) {
      const secret = el('input', { type: 'password', autocomplete: 'off' });
      const overlap = select(OVERLAPS, String(24 * 3600));
      rotate.addEventListener('click', () => openDialog({
        title: 'Rotate the signing secret?',
        content: [
          field(`rotate-secret-${t.id}`, 'New signing secret', secret, 'The secret the sender signs with from now on.'),
          field(`secret-overlap-${t.id}`, 'The current secret keeps working', overlap, 'Deliveries signed with it are accepted meanwhile.'),
        ],
        confirm: 'Rotate',
        opener: rotate,
        focus: secret,
        watch: [secret],
        ready: () => secret.value.length > 0,
        action: async () => {
          await api('POST', triggerPath(t, '/rotate-signing-secret'), { secret: secret.value, previous_secret_expires_in_seconds: Number(overlap.value) });
          secret.value = '';
          const until = overlap.selectedOptions[0]?.textContent ?? '';
          notice.replaceChildren(el('div', { class: 'notice' }, el('p', {}, `Signing secret of the ${triggerLabel(t)} trigger rotated; the previous one works ${until === 'No longer' ? 'no longer' : `for ${until.toLowerCase()}`}.`)));
          await reload();
        },
      }));
    }
    const rejectHandover = rejectHandoverButton({
      triggerId: t.id, flow: t.flow, signature: t.signature,
      done: async (message) => {
        notice.replaceChildren(el('div', { class: 'notice' }, el('p', {}, message)));
        await reload();
      },
    });
    const handover = handoverSummary(t.signature);
    const remove = el('button', { type: 'button', class: 'secondary' }, 'Delete');
    remove.addEventListener('click', () => openDialog({
      title: 'Delete this trigger?',
      content: [el('p', {}, `The trigger ${triggerLabel(t)} stops at once; its URL will answer 404.`)],
      confirm: 'Delete',
      opener: remove,
      action: async () => {
        await api('DELETE', triggerPath(t));
        await reload();
      },
    }));
    return el('tr', {},
      el('th', { scope: 'row' }, triggerLabel(t),
        t.name_is_default === false ? '' : el('span', { class: 'hint' }, ' (no name: its flow\'s)'),
        t.description ? el('p', { class: 'hint' }, t.description) : ''),
      el('td', {}, flowLink(t.flow)),
      el('td', {}, RESPONSE_MODES[t.response_mode] ?? t.response_mode,
        t.acknowledge_response && el('p', { class: 'hint' }, 'Fixed answer: ', ...fixedAnswerSummary(t.acknowledge_response))),
      el('td', {}, t.enabled ? 'Enabled' : 'Disabled'),
      el('td', {}, activityCell(context.activity.get(t.id))),
      el('td', {}, el('code', {}, t.url), ' ', copyButton(t.url, alert, `Copy URL of the ${triggerLabel(t)} trigger`), handover && el('p', { class: 'hint' }, handover)),
      el('td', {}, el('div', { class: 'actions' },
        el('a', { href: deliveriesHash(t.id), class: 'button-link', 'aria-label': `Deliveries of the ${triggerLabel(t)} trigger` }, 'Deliveries'),
        editButton, toggle, regenerateUrl, regenerateKey, rotate, rejectHandover, remove)));
  });
  return el('table', {}, el('caption', { class: 'hint' }, 'Webhook triggers'),
    el('thead', {}, el('tr', {}, ...['Trigger', 'Flow', 'Response mode', 'Enabled', 'Last 24 hours', 'URL', 'Actions'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...rows));
}

/**
 * The form for a new trigger, or for changing `trigger` (button "Save"). A change sends only the
 * settings that differ; the signature is sent again only when it changed or a new secret is given,
 * because the API never returns a secret to fill in. Its failures, the API's own words about a
 * signature among them, are shown in the form, beside its buttons.
 */
function triggerForm(options: { trigger?: Trigger; onDone: (trigger: Trigger) => void; onCancel: () => void }): HTMLElement {
  const { trigger } = options;
  const alert = alertRegion();
  const flow = el('select', { required: true, 'aria-busy': 'true' }, el('option', { value: trigger?.flow ?? '' }, trigger?.flow ?? 'Loading flows…'));
  void withProgress(flow, alert, async () => {
    const { flows } = await api<{ flows: string[] }>('GET', '/flows');
    flow.replaceChildren(...(flows.length ? flows.map((name) => el('option', { value: name }, name)) : [el('option', { value: '' }, 'No flow is deployed')]));
    if (trigger) flow.value = trigger.flow;
    delivery.update();
  });
  const mode = select(Object.entries(RESPONSE_MODES), trigger?.response_mode);
  const filter = textInput(trigger?.event_filter.join(', '));
  const [apiKeyRow, apiKey] = checkbox('api-key-enabled', 'Secure with API key', trigger?.api_key_enabled);
  const signature = signatureFields({ current: trigger?.signature, alert });
  const delivery = senderDeliveryFields({ sender: signature.sender, mode, flow, filter, splitBatches: trigger?.split_batches });
  signature.onSenderChange(delivery.update);
  const fixedAnswer = fixedAnswerFields(trigger?.acknowledge_response);
  const [dedupRow, dedup] = checkbox('deduplicate', 'Deduplicate', trigger?.deduplicate);
  const sourceIps = textInput(trigger?.allowed_source_ips?.join(', '));

  const submit = el('button', { type: 'submit' }, trigger ? 'Save' : 'Create');
  const cancel = el('button', { type: 'button', class: 'secondary', click: options.onCancel }, 'Cancel');
  const name = textInput(trigger?.name_is_default === false ? trigger.name : '', { maxlength: '100' });
  const description = el('textarea', { rows: '2', maxlength: '1000' });
  description.value = trigger?.description ?? '';
  const title = trigger ? `Edit the ${triggerLabel(trigger)} trigger` : 'New trigger';
  const form = el('form', { 'aria-labelledby': 'trigger-form-title' },
    el('h2', { id: 'trigger-form-title' }, title),
    field('trigger-name', 'Name', name, 'To tell this trigger from others, above all from others of the same flow. Empty: the flow\'s name is shown.'),
    field('trigger-description', 'Description', description, 'Optional notes: what sends here, who owns it.'),
    field('flow', 'Flow', flow, 'The deployed flow each delivery runs.'),
    flowPreview(flow),
    field('response-mode', 'Response mode', mode),
    field('event-filter', 'Event filter', filter, 'Event types to accept, separated by commas; a trailing * matches a prefix. Empty accepts every event. The chosen sender\'s event names are suggested.'),
    delivery.suggestions,
    apiKeyRow, ...signature.elements, delivery.timing, delivery.splitRow, ...fixedAnswer.elements, dedupRow,
    field('source-ips', 'Allowed source IPs', sourceIps, 'Addresses or CIDR ranges deliveries may come from, separated by commas. Empty allows any address.'),
    alert,
    el('div', { class: 'actions' }, submit, cancel));

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void withProgress(submit, alert, async () => {
      const ips = list(sourceIps.value);
      const body: Record<string, unknown> = {
        name: name.value.trim() || null,
        description: description.value.trim() || null,
        flow: flow.value.trim(),
        response_mode: mode.value,
        event_filter: filter.value.split(',').map((s) => s.trim()).filter(Boolean),
        api_key_enabled: apiKey.checked,
        deduplicate: dedup.checked,
        split_batches: delivery.splitBatches(),
        allowed_source_ips: ips.length ? ips : null,
        acknowledge_response: fixedAnswer.body(),
      };
      if (!trigger) {
        options.onDone(await api<Trigger>('POST', '/triggers', { ...body, signature: signature.body() }));
        return;
      }
      // Unchanged verification settings without a new secret keep the stored signature as it is.
      if (!signature.unchanged()) body.signature = signature.body();
      options.onDone(await api<Trigger>('PATCH', triggerPath(trigger), body));
    });
  });
  return form;
}
