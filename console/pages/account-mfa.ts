/**
 * The Account page's multi-factor authentication: the user's authenticators (name, added, last
 * use), adding one, removing one, the recovery codes left and new ones, and the security events.
 * Removing, regenerating and adding a further authenticator need a fresh step-up proof for that
 * action: the page asks for a current code, verifies it (`POST /accounts/totp/verify` with the
 * action's `purpose`) and sends the proof along. A proof serves its one action once, so each
 * action asks for a code (a code works once: the next action takes the app's next code).
 */
import { encode } from 'uqr';
import { api, type Credentials } from '../api.js';
import { actionButton, alertRegion, copyButton, el, field, openDialog, textInput, withProgress } from '../dom.js';

interface Factor { id: string; name: string; created_at: string; last_used_at: string | null }
interface Factors { factors: Factor[]; recovery_codes_remaining: number }
interface MfaEvent { type: string; at: string; factor_id: string | null; source_ip: string | null; user_agent: string | null; actor?: string }

const EVENT_WORDS: Record<string, string> = {
  factor_enrolled: 'Authenticator added',
  verification_succeeded: 'Code accepted',
  verification_failed: 'Code refused',
  locked_out: 'Too many attempts: locked',
  factor_removed: 'Authenticator removed',
  recovery_codes_regenerated: 'New recovery codes',
  recovery_code_used: 'Recovery code used',
  recovery_code_failed: 'Recovery code refused',
  admin_reset: 'Reset by an administrator',
  factors_listed_by_admin: 'Viewed by an administrator',
};

const codeInput = () => textInput('', { inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: '6', required: true });
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

/** What a proof is for (`purpose`): each sensitive action accepts only its own, once. */
type ProofPurpose = 'add_factor' | 'remove_factor' | 'regenerate_recovery_codes';

/** Asks for a current code, then runs `action` with a fresh step-up proof for `purpose`. */
function withFreshProof(opener: HTMLElement, title: string, purpose: ProofPurpose, action: (mfaToken: string) => Promise<void>): void {
  const code = codeInput();
  openDialog({
    title,
    content: [field('step-up-code', 'Current code', code, 'The 6 digits your authenticator app shows now (each code works once: after another action, wait for the next one).')],
    confirm: 'Continue',
    opener,
    focus: code,
    ready: () => /^[0-9]{6}$/.test(code.value.trim()),
    watch: [code],
    action: async () => {
      const verified = await api<{ mfa_token: string }>('POST', '/accounts/totp/verify', { code: code.value.trim(), purpose });
      await action(verified.mfa_token);
    },
  });
}

export function authenticatorSection(signedIn: Credentials): HTMLElement {
  const alert = alertRegion();
  const body = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading…'));
  const events = el('div');
  const heading = el('h2', { id: 'totp-title' }, 'Two-factor authentication');
  if (signedIn.kind !== 'token') {
    return el('section', { 'aria-labelledby': 'totp-title' }, heading,
      el('p', {}, 'Setting up an authenticator needs a sign-in with your own token, not an API key.'));
  }

  const load = () => withProgress(body, alert, async () => {
    const state = await api<Factors>('GET', '/accounts/factors');
    body.replaceChildren(...(state.factors.length === 0 ? firstSetUp() : overview(state)));
    await loadEvents();
  });

  const loadEvents = async () => {
    const page = await api<{ events: MfaEvent[] }>('GET', '/accounts/mfa/events?limit=20');
    events.replaceChildren(el('h3', {}, 'Security events'), page.events.length === 0 ? el('p', {}, 'Nothing yet.')
      : el('table', {}, el('caption', { class: 'hint' }, 'The last 20, newest first (kept 90 days)'),
        el('thead', {}, el('tr', {}, ...['When', 'What', 'From'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, ...page.events.map((event) => el('tr', {},
          el('td', {}, when(event.at)), el('td', {}, EVENT_WORDS[event.type] ?? event.type),
          el('td', {}, [event.source_ip, event.user_agent].filter(Boolean).join(' · ') || '—'))))));
  };

  const firstSetUp = () => [
    el('p', {}, 'Use an authenticator app (TOTP) as a second factor.'),
    el('div', { class: 'actions' }, actionButton('Set up authenticator', alert, async () => {
      const started = await api<{ secret: string; otpauth_uri: string }>('POST', '/accounts/totp-registration');
      body.replaceChildren(confirmStep(started, alert, async (input) => {
        const { recovery_codes: codes } = await api<{ recovery_codes: string[] }>('POST', '/accounts/confirm-totp-registration', input);
        body.replaceChildren(recoveryCodes(codes, alert, 'Authenticator set up. Your recovery codes'), el('div', { class: 'actions' }, actionButton('Done', alert, load)));
        body.querySelector<HTMLElement>('h3')?.focus();
        await loadEvents();
      }, true));
      body.querySelector<HTMLInputElement>('#totp-name')?.focus();
    })),
  ];

  const overview = (state: Factors) => {
    const rows = state.factors.map((factor) => {
      const remove = el('button', { type: 'button', class: 'secondary', 'aria-label': `Remove authenticator ${factor.name}` }, 'Remove');
      remove.addEventListener('click', () => withFreshProof(remove, `Remove ${factor.name}? Confirm with a current code`, 'remove_factor', async (mfaToken) => {
        await api('DELETE', `/accounts/factors/${encodeURIComponent(factor.id)}`, undefined, undefined, { 'x-mfa-token': mfaToken });
        await load();
      }));
      return el('tr', {}, el('td', {}, factor.name), el('td', {}, when(factor.created_at)), el('td', {}, when(factor.last_used_at)), el('td', {}, remove));
    });
    const add = el('button', { type: 'button' }, 'Add another authenticator');
    add.addEventListener('click', () => withFreshProof(add, 'Add an authenticator: confirm with a current code', 'add_factor', async (mfaToken) => {
      const headers = { 'x-mfa-token': mfaToken };
      const started = await api<{ secret: string; otpauth_uri: string }>('POST', '/accounts/totp-registration', undefined, undefined, headers);
      body.replaceChildren(confirmStep(started, alert, async (input) => {
        await api('POST', '/accounts/confirm-totp-registration', input, undefined, headers);
        await load();
      }, true));
      body.querySelector<HTMLInputElement>('#totp-name')?.focus();
    }));
    const regenerate = el('button', { type: 'button', class: 'secondary' }, 'New recovery codes');
    regenerate.addEventListener('click', () => withFreshProof(regenerate, 'New recovery codes? The old ones stop working', 'regenerate_recovery_codes', async (mfaToken) => {
      const { recovery_codes: codes } = await api<{ recovery_codes: string[] }>('POST', '/accounts/recovery-codes/regenerate', undefined, undefined, { 'x-mfa-token': mfaToken });
      body.replaceChildren(recoveryCodes(codes, alert, 'Your new recovery codes'), el('div', { class: 'actions' }, actionButton('Done', alert, load)));
      body.querySelector<HTMLElement>('h3')?.focus();
      await loadEvents();
    }));
    return [
      el('table', {}, el('caption', { class: 'hint' }, 'Your authenticators'),
        el('thead', {}, el('tr', {}, ...['Name', 'Added', 'Last used', 'Actions'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, ...rows)),
      el('div', { class: 'actions' }, add),
      el('p', { id: 'recovery-remaining' }, `Recovery codes left: ${state.recovery_codes_remaining} of 10.`),
      el('div', { class: 'actions' }, regenerate),
    ];
  };

  void load();
  return el('section', { 'aria-labelledby': 'totp-title' }, heading, alert, body, events);
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

function confirmStep(
  started: { secret: string; otpauth_uri: string },
  alert: HTMLElement,
  confirmWith: (input: { secret: string; code: string; name?: string }) => Promise<void>,
  named = false,
): HTMLElement {
  const code = codeInput();
  const name = textInput('', { maxlength: '64' });
  const confirm = el('button', { type: 'submit' }, 'Confirm');
  const form = el('form', { 'aria-label': 'Confirm the authenticator' },
    el('p', {}, 'Scan this code with your authenticator app, or enter the secret by hand. Then enter the 6-digit code it shows.'),
    qrCode(started.otpauth_uri, 'QR code to add Flowgate to your authenticator app'),
    el('p', {}, 'Secret: ', el('code', { id: 'totp-secret' }, started.secret), ' ', copyButton(started.secret, alert, 'Copy the secret')),
    named && field('totp-name', 'Name', name, 'Optional: what you call this device, e.g. "Tablet". Empty: "Authenticator".'),
    field('totp-code', 'Code', code, 'The 6 digits your app shows now.'),
    el('div', { class: 'actions' }, confirm));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void withProgress(confirm, alert, () => confirmWith({
      secret: started.secret, code: code.value.trim(), ...(named && name.value.trim() !== '' && { name: name.value.trim() }),
    }));
  });
  return form;
}

function recoveryCodes(codes: string[], alert: HTMLElement, title: string): HTMLElement {
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
    el('h3', { tabindex: '-1' }, title),
    el('p', {}, 'Each code signs you in once if you lose your authenticator. They are shown this once only: copy or download them now.'),
    el('ol', { class: 'codes', 'aria-label': 'Recovery codes' }, ...codes.map((c) => el('li', {}, el('code', {}, c)))),
    el('div', { class: 'actions' }, copyButton(codes.join('\n'), alert, 'Copy the recovery codes'), download));
}
