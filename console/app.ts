/**
 * The Flowgate console: plain DOM, no framework. It signs in with a bearer token or an API key,
 * kept in this tab's session storage only, and calls the API of the origin it was served from.
 */
import './app.css';

type Credentials = { kind: 'token' | 'apiKey'; value: string };
type Child = Node | string | false | null | undefined;

const STORAGE_KEY = 'flowgate.credentials';

/** The API's error codes in words; anything else falls back to the code itself. */
const ERROR_WORDS: Record<string, string> = {
  unauthorized: 'Your sign-in was not accepted: the token or API key is wrong or has expired. Sign out and sign in again.',
  validation_error: 'The service did not accept these settings. Check the fields and try again.',
  not_found: 'It no longer exists: it may have been deleted elsewhere.',
  conflict: 'It was changed elsewhere at the same time. Reload and try again.',
  already_exists: 'It already exists.',
  too_many_attempts: 'Too many attempts. Wait a minute and try again.',
  payload_too_large: 'That is too large for the service.',
  internal_error: 'The service failed unexpectedly. Try again in a moment.',
  unavailable: 'The service is starting or unavailable. Try again in a moment.',
  network: 'The service could not be reached. Check your connection and try again.',
};

class ApiError extends Error {
  constructor(readonly code: string, readonly status: number) {
    super(ERROR_WORDS[code] ?? `The service answered "${code}" (HTTP ${status}).`);
  }
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | ((e: Event) => void)> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') node.addEventListener(name, value);
    else if (value === true) node.setAttribute(name, '');
    else if (value !== false) node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const credentials = {
  get(): Credentials | undefined {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Credentials) : undefined;
  },
  set(value: Credentials) {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(value));
  },
  clear() {
    sessionStorage.removeItem(STORAGE_KEY);
  },
};

async function api<T>(method: string, path: string, body?: unknown, as: Credentials | undefined = credentials.get()): Promise<T> {
  const headers: Record<string, string> = {};
  if (as?.kind === 'token') headers.authorization = `Bearer ${as.value}`;
  if (as?.kind === 'apiKey') headers['x-api-key'] = as.value;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError('network', 0);
  }
  if (response.status === 204) return undefined as T;
  const payload = (await response.json().catch(() => ({}))) as { data?: T; error?: string };
  if (!response.ok) throw new ApiError(payload.error ?? 'internal_error', response.status);
  return payload.data as T;
}

/**
 * Runs `action` with `control` marked busy (and disabled) meanwhile; a failure is put into
 * `alert` in words, so nothing fails silently.
 */
async function withProgress(control: HTMLElement, alert: HTMLElement, action: () => Promise<void>): Promise<void> {
  alert.textContent = '';
  control.setAttribute('aria-busy', 'true');
  if (control instanceof HTMLButtonElement) control.disabled = true;
  try {
    await action();
  } catch (error) {
    alert.textContent = error instanceof Error ? error.message : String(error);
  } finally {
    control.removeAttribute('aria-busy');
    if (control instanceof HTMLButtonElement) control.disabled = false;
  }
}

const root = document.getElementById('app')!;

function render(): void {
  const signedIn = credentials.get();
  root.replaceChildren(signedIn ? shell(location.hash === '#/account' ? accountPage(signedIn) : triggersPage()) : signInPage());
  root.querySelector<HTMLElement>('h1')?.focus();
}

function shell(page: HTMLElement): HTMLElement {
  const current = location.hash === '#/account' ? 'account' : 'triggers';
  const link = (id: string, text: string) => el('li', {}, el('a', { href: `#/${id}`, ...(current === id && { 'aria-current': 'page' }) }, text));
  const signOut = el('button', { type: 'button', class: 'secondary', click: () => {
    credentials.clear();
    history.replaceState(null, '', location.pathname);
    render();
  } }, 'Sign out');
  return el('div', {}, el('header', {}, el('strong', {}, 'Flowgate'), el('nav', { 'aria-label': 'Main' }, el('ul', {}, link('triggers', 'Triggers'), link('account', 'Account'))), el('span', { class: 'spacer' }), signOut), page);
}

function signInPage(): HTMLElement {
  const alert = el('div', { role: 'alert', class: 'alert' });
  const token = el('input', { type: 'password', id: 'token', autocomplete: 'off' });
  const apiKey = el('input', { type: 'password', id: 'api-key', autocomplete: 'off' });
  const submit = el('button', { type: 'submit' }, 'Sign in');
  const form = el('form', { submit: (event) => {
    event.preventDefault();
    const chosen: Credentials | undefined = token.value.trim() ? { kind: 'token', value: token.value.trim() } : apiKey.value.trim() ? { kind: 'apiKey', value: apiKey.value.trim() } : undefined;
    if (!chosen) {
      alert.textContent = 'Enter a token or an API key.';
      return;
    }
    void withProgress(submit, alert, async () => {
      // Checked before it is kept, so a wrong one is reported here rather than on every page.
      await api('GET', '/triggers?limit=1', undefined, chosen);
      credentials.set(chosen);
      render();
    });
  } },
  el('label', { for: 'token' }, 'Token'),
  el('p', { class: 'hint', id: 'token-hint' }, 'A bearer token from your identity provider, or the link npm start prints.'),
  token,
  el('label', { for: 'api-key' }, 'API key'),
  apiKey,
  el('div', { class: 'actions' }, submit));
  token.setAttribute('aria-describedby', 'token-hint');
  return el('main', {}, el('h1', { tabindex: '-1' }, 'Sign in to Flowgate'), alert, form, el('p', { class: 'hint' }, 'Kept in this browser tab only, until you sign out or close it.'));
}

function accountPage(signedIn: Credentials): HTMLElement {
  return el('main', {}, el('h1', { tabindex: '-1' }, 'Account'), el('p', {}, signedIn.kind === 'token' ? 'Signed in with a token.' : 'Signed in with an API key.'));
}

interface Trigger {
  id: string;
  url: string;
  flow: string;
  response_mode: 'acknowledge' | 'wait';
  enabled: boolean;
  api_key?: string;
}

const RESPONSE_MODES = { acknowledge: 'Acknowledge at once', wait: "Wait for the flow's result" } as const;

function copyButton(text: string, alert: HTMLElement, label: string): HTMLButtonElement {
  const button = el('button', { type: 'button', class: 'secondary', 'aria-label': label }, 'Copy');
  button.addEventListener('click', () => void withProgress(button, alert, async () => {
    await navigator.clipboard.writeText(text).catch(() => {
      throw new Error('The browser did not allow copying; select the text and copy it yourself.');
    });
    button.textContent = 'Copied';
  }));
  return button;
}

function triggersPage(): HTMLElement {
  const alert = el('div', { role: 'alert', class: 'alert' });
  const notice = el('div', { 'aria-live': 'polite' });
  const list = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading triggers…'));
  const newButton = el('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': 'new-trigger' }, 'New trigger');
  const formSlot = el('div', { id: 'new-trigger' });

  const load = () => withProgress(list, alert, async () => {
    const { triggers } = await api<{ triggers: Trigger[] }>('GET', '/triggers?limit=500');
    list.replaceChildren(triggers.length === 0 ? el('p', {}, 'No triggers yet.') : triggerTable(triggers, alert, load));
  });

  newButton.addEventListener('click', () => {
    const open = newButton.getAttribute('aria-expanded') === 'true';
    newButton.setAttribute('aria-expanded', String(!open));
    formSlot.replaceChildren();
    if (open) return;
    formSlot.append(newTriggerForm(alert, (created) => {
      newButton.setAttribute('aria-expanded', 'false');
      formSlot.replaceChildren();
      notice.replaceChildren(createdNotice(created, alert));
      void load();
    }, () => {
      newButton.setAttribute('aria-expanded', 'false');
      formSlot.replaceChildren();
      newButton.focus();
    }));
    formSlot.querySelector<HTMLElement>('#flow')?.focus();
  });
  void load();
  return el('main', {}, el('h1', { tabindex: '-1' }, 'Triggers'), alert, notice, newButton, formSlot, el('h2', {}, 'Your triggers'), list);
}

function createdNotice(trigger: Trigger, alert: HTMLElement): HTMLElement {
  return el('div', { class: 'notice' },
    el('p', {}, `Trigger for ${trigger.flow} created. Its URL: `, el('code', {}, trigger.url)),
    trigger.api_key && el('p', {}, 'Its API key, shown this once only: ', el('code', {}, trigger.api_key), ' ', copyButton(trigger.api_key, alert, 'Copy API key')));
}

function triggerTable(triggers: Trigger[], alert: HTMLElement, reload: () => Promise<void>): HTMLElement {
  const rows = triggers.map((t) => {
    const toggle = el('button', { type: 'button', class: 'secondary' }, t.enabled ? 'Disable' : 'Enable');
    toggle.addEventListener('click', () => void withProgress(toggle, alert, async () => {
      await api('PATCH', `/triggers/${encodeURIComponent(t.id)}`, { enabled: !t.enabled });
      await reload();
    }));
    const remove = el('button', { type: 'button', class: 'secondary' }, 'Delete');
    remove.addEventListener('click', () => confirmDelete(t, remove, alert, reload));
    return el('tr', {},
      el('td', {}, t.flow),
      el('td', {}, RESPONSE_MODES[t.response_mode] ?? t.response_mode),
      el('td', {}, t.enabled ? 'Enabled' : 'Disabled'),
      el('td', {}, el('code', {}, t.url), ' ', copyButton(t.url, alert, `Copy URL of the ${t.flow} trigger`)),
      el('td', {}, el('div', { class: 'actions' }, toggle, remove)));
  });
  return el('table', {}, el('caption', { class: 'hint' }, 'Webhook triggers'),
    el('thead', {}, el('tr', {}, ...['Flow', 'Response mode', 'Enabled', 'URL', 'Actions'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...rows));
}

function confirmDelete(trigger: Trigger, opener: HTMLElement, alert: HTMLElement, reload: () => Promise<void>): void {
  const confirm = el('button', { type: 'button' }, 'Delete');
  const cancel = el('button', { type: 'button', class: 'secondary' }, 'Cancel');
  const dialog = el('dialog', { 'aria-labelledby': 'delete-title' },
    el('h2', { id: 'delete-title' }, 'Delete this trigger?'),
    el('p', {}, `The trigger for ${trigger.flow} stops at once; its URL will answer 404.`),
    el('div', { class: 'actions' }, confirm, cancel));
  const close = () => {
    dialog.close();
    dialog.remove();
    opener.focus();
  };
  cancel.addEventListener('click', close);
  confirm.addEventListener('click', () => void withProgress(confirm, alert, async () => {
    try {
      await api('DELETE', `/triggers/${encodeURIComponent(trigger.id)}`);
    } finally {
      dialog.close();
      dialog.remove();
    }
    await reload();
  }));
  document.body.append(dialog);
  dialog.showModal();
  cancel.focus();
}

function field(id: string, label: string, control: HTMLElement, hint?: string): HTMLElement {
  if (hint) control.setAttribute('aria-describedby', `${id}-hint`);
  control.id = id;
  return el('div', {}, el('label', { for: id }, label), hint && el('p', { class: 'hint', id: `${id}-hint` }, hint), control);
}

function checkbox(id: string, label: string): [HTMLElement, HTMLInputElement] {
  const input = el('input', { type: 'checkbox', id });
  return [el('label', { class: 'check', for: id }, input, label), input];
}

function select(options: readonly (readonly [string, string])[]): HTMLSelectElement {
  return el('select', {}, ...options.map(([value, text]) => el('option', { value }, text)));
}

const SERVICE_NAMES: Record<string, string> = {
  stripe: 'Stripe', github: 'GitHub', slack: 'Slack', shopify: 'Shopify', twilio: 'Twilio', standard_webhooks: 'Standard Webhooks', custom: 'Custom HMAC',
};

function newTriggerForm(alert: HTMLElement, onCreated: (trigger: Trigger) => void, onCancel: () => void): HTMLElement {
  const flow = el('select', { required: true, 'aria-busy': 'true' }, el('option', { value: '' }, 'Loading flows…'));
  void withProgress(flow, alert, async () => {
    const { flows } = await api<{ flows: string[] }>('GET', '/flows');
    flow.replaceChildren(...(flows.length ? flows.map((name) => el('option', { value: name }, name)) : [el('option', { value: '' }, 'No flow is deployed')]));
  });
  const mode = select(Object.entries(RESPONSE_MODES));
  const filter = el('input', { type: 'text', autocomplete: 'off' });
  const [apiKeyRow, apiKey] = checkbox('api-key-enabled', 'Secure with API key');
  const [verifyRow, verify] = checkbox('verify', 'Enable signature verification');
  const [dedupRow, dedup] = checkbox('deduplicate', 'Deduplicate');
  const service = select(SIGNATURE_SERVICES.map((s) => [s, SERVICE_NAMES[s] ?? s] as const));
  const secret = el('input', { type: 'password', autocomplete: 'off' });
  const algorithm = select([['sha256', 'SHA-256'], ['sha1', 'SHA-1'], ['sha512', 'SHA-512']]);
  const header = el('input', { type: 'text', autocomplete: 'off' });
  const encoding = select([['hex', 'Hex'], ['base64', 'Base64']]);
  const prefix = el('input', { type: 'text', autocomplete: 'off' });
  const timestampHeader = el('input', { type: 'text', autocomplete: 'off' });
  const custom = el('fieldset', { hidden: true }, el('legend', {}, 'Custom HMAC'),
    field('algorithm', 'Algorithm', algorithm), field('signature-header', 'Signature header', header),
    field('encoding', 'Encoding', encoding), field('prefix', 'Signature prefix', prefix, 'Optional, e.g. sha256='),
    field('timestamp-header', 'Timestamp header', timestampHeader, 'Optional: signed with the body and checked for freshness.'));
  const signature = el('fieldset', { hidden: true }, el('legend', {}, 'Signature'),
    field('service', 'Service', service), field('secret', 'Signing secret', secret), custom);
  verify.addEventListener('change', () => (signature.hidden = !verify.checked));
  service.addEventListener('change', () => (custom.hidden = service.value !== 'custom'));

  const submit = el('button', { type: 'submit' }, 'Create');
  const cancel = el('button', { type: 'button', class: 'secondary', click: onCancel }, 'Cancel');
  const form = el('form', { 'aria-label': 'New trigger' },
    field('flow', 'Flow', flow, 'The deployed flow each delivery runs.'),
    field('response-mode', 'Response mode', mode),
    field('event-filter', 'Event filter', filter, 'Event types to accept, separated by commas; a trailing * matches a prefix. Empty accepts every event.'),
    apiKeyRow, verifyRow, signature, dedupRow,
    el('div', { class: 'actions' }, submit, cancel));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void withProgress(submit, alert, async () => {
      const body = {
        flow: flow.value.trim(),
        response_mode: mode.value,
        event_filter: filter.value.split(',').map((s) => s.trim()).filter(Boolean),
        api_key_enabled: apiKey.checked,
        deduplicate: dedup.checked,
        signature: verify.checked
          ? {
              service: service.value,
              secret: secret.value,
              ...(service.value === 'custom' && {
                custom: { algorithm: algorithm.value, header: header.value.trim(), encoding: encoding.value, ...(prefix.value && { prefix: prefix.value }), ...(timestampHeader.value.trim() && { timestamp_header: timestampHeader.value.trim() }) },
              }),
            }
          : null,
      };
      onCreated(await api<Trigger>('POST', '/triggers', body));
    });
  });
  return form;
}

/**
 * The sign-in link `npm start` prints carries the token in the fragment, which browsers never
 * send: keep it for this tab and take it out of the address bar and history at once.
 */
const fragment = new URLSearchParams(location.hash.slice(1));
const linkToken = fragment.get('token');
if (linkToken) {
  credentials.set({ kind: 'token', value: linkToken });
  history.replaceState(null, '', location.pathname + location.search);
}
window.addEventListener('hashchange', render);
render();
