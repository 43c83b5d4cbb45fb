/** The Account page: API keys (create, shown once; list; delete) and the authenticator (TOTP) with recovery codes. */
import { encode } from 'uqr';
import { api, type Credentials } from '../api.js';
import { actionButton, alertRegion, copyButton, el, field, openDialog, pageHeading, textInput, withProgress } from '../dom.js';

interface ApiKeySummary {
  id: string;
  created_at: string;
}

export function accountPage(signedIn: Credentials): HTMLElement {
  return el('main', {}, pageHeading('Account'),
    el('p', {}, signedIn.kind === 'token' ? 'Signed in with a token.' : 'Signed in with an API key.'),
    apiKeysSection(),
    authenticatorSection(signedIn));
}

function apiKeysSection(): HTMLElement {
  const alert = alertRegion();
  const notice = el('div', { 'aria-live': 'polite' });
  const listing = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading API keys…'));

  const load = () => withProgress(listing, alert, async () => {
    const { api_keys: keys } = await api<{ api_keys: ApiKeySummary[] }>('GET', '/api-keys?limit=500');
    if (keys.length === 0) {
      listing.replaceChildren(el('p', {}, 'No API keys yet.'));
      return;
    }
    const rows = keys.map((key) => {
      const remove = el('button', { type: 'button', class: 'secondary', 'aria-label': `Delete API key ${key.id}` }, 'Delete');
      remove.addEventListener('click', () => openDialog({
        title: 'Delete this API key?',
        content: [el('p', {}, 'Requests with this key are refused at once. This cannot be undone.')],
        confirm: 'Delete',
        opener: remove,
        action: async () => {
          await api('DELETE', `/api-keys/${encodeURIComponent(key.id)}`);
          notice.replaceChildren(el('p', { class: 'notice' }, `API key ${key.id} deleted.`));
          await load();
        },
      }));
      return el('tr', {}, el('td', {}, el('code', {}, key.id)), el('td', {}, new Date(key.created_at).toLocaleString()), el('td', {}, remove));
    });
    listing.replaceChildren(el('table', {}, el('caption', { class: 'hint' }, 'Your API keys (the keys themselves are never shown again)'),
      el('thead', {}, el('tr', {}, ...['Key id', 'Created', 'Actions'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, ...rows)));
  });

  const create = actionButton('Create', alert, async () => {
    const createdKey = await api<{ id: string; api_key: string }>('POST', '/api-keys');
    notice.replaceChildren(el('div', { class: 'notice' },
      el('p', {}, 'Your new API key, shown this once only: ', el('code', {}, createdKey.api_key), ' ', copyButton(createdKey.api_key, alert, 'Copy the new API key')),
      el('p', { class: 'hint' }, 'Keep it somewhere safe: only its hash is stored.')));
    await load();
  }, { 'aria-describedby': 'api-keys-hint' });

  void load();
  return el('section', { 'aria-labelledby': 'api-keys-title' },
    el('h2', { id: 'api-keys-title' }, 'API keys'),
    el('p', { class: 'hint', id: 'api-keys-hint' }, 'Create a key for a program; send it as X-Api-Key.'),
    alert, notice, el('div', { class: 'actions' }, create), listing);
}

/** The otpauth:// URI as an SVG QR code, built as DOM nodes (no markup strings). */
function qrCode(text: string, label: string): SVGSVGElement {
  const { size, data } = encode(text, { ecc: 'M', border: 4 });
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('width', String(size * 5));
  svg.setAttribute('height', String(size * 5));
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('shape-rendering', 'crispEdges');
  const background = document.createElementNS(ns, 'rect');
  background.setAttribute('width', String(size));
  background.setAttribute('height', String(size));
  background.setAttribute('fill', '#fff');
  svg.append(background);
  // One path of unit squares: a few kilobytes, however many dark modules.
  let d = '';
  data.forEach((row, y) => row.forEach((dark, x) => {
    if (dark) d += `M${x} ${y}h1v1h-1z`;
  }));
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000');
  svg.append(path);
  return svg;
}

function authenticatorSection(signedIn: Credentials): HTMLElement {
  const alert = alertRegion();
  const body = el('div');
  const heading = el('h2', { id: 'totp-title' }, 'Two-factor authentication');
  if (signedIn.kind !== 'token') {
    body.append(el('p', {}, 'Setting up an authenticator needs a sign-in with your own token, not an API key.'));
    return el('section', { 'aria-labelledby': 'totp-title' }, heading, body);
  }
  const start = actionButton('Set up authenticator', alert, async () => {
    const started = await api<{ secret: string; otpauth_uri: string }>('POST', '/accounts/totp-registration');
    body.replaceChildren(confirmStep(started, alert, body));
    body.querySelector<HTMLInputElement>('#totp-code')?.focus();
  });
  body.append(el('p', {}, 'Use an authenticator app (TOTP) as a second factor.'), el('div', { class: 'actions' }, start));
  return el('section', { 'aria-labelledby': 'totp-title' }, heading, alert, body);
}

function confirmStep(started: { secret: string; otpauth_uri: string }, alert: HTMLElement, body: HTMLElement): HTMLElement {
  const code = textInput('', { inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: '6', required: true });
  const confirm = el('button', { type: 'submit' }, 'Confirm');
  const form = el('form', { 'aria-label': 'Confirm the authenticator' },
    el('p', {}, 'Scan this code with your authenticator app, or enter the secret by hand. Then enter the 6-digit code it shows.'),
    qrCode(started.otpauth_uri, 'QR code to add Flowgate to your authenticator app'),
    el('p', {}, 'Secret: ', el('code', { id: 'totp-secret' }, started.secret), ' ', copyButton(started.secret, alert, 'Copy the secret')),
    field('totp-code', 'Code', code, 'The 6 digits your app shows now.'),
    el('div', { class: 'actions' }, confirm));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void withProgress(confirm, alert, async () => {
      const { recovery_codes: codes } = await api<{ recovery_codes: string[] }>('POST', '/accounts/confirm-totp-registration', { secret: started.secret, code: code.value.trim() });
      body.replaceChildren(recoveryCodes(codes, alert));
      body.querySelector<HTMLElement>('h3')?.focus();
    });
  });
  return form;
}

function recoveryCodes(codes: string[], alert: HTMLElement): HTMLElement {
  const text = `Flowgate recovery codes (each works once):\n\n${codes.join('\n')}\n`;
  const download = actionButton('Download', alert, async () => {
    // A Blob URL is a download, not a fetch: the console's Content-Security-Policy does not govern it.
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const link = el('a', { href: url, download: 'flowgate-recovery-codes.txt', hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }, { class: 'secondary', 'aria-label': 'Download the recovery codes' });
  return el('div', { class: 'notice' },
    el('h3', { tabindex: '-1' }, 'Authenticator set up. Your recovery codes'),
    el('p', {}, 'Each code signs you in once if you lose your authenticator. They are shown this once only: copy or download them now.'),
    el('ol', { class: 'codes', 'aria-label': 'Recovery codes' }, ...codes.map((c) => el('li', {}, el('code', {}, c)))),
    el('div', { class: 'actions' }, copyButton(codes.join('\n'), alert, 'Copy the recovery codes'), download));
}
