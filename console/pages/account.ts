/** The Account page: API keys (create, shown once; list; delete) and multi-factor authentication (`account-mfa.ts`). */
import { api, type Credentials } from '../api.js';
import { actionButton, alertRegion, copyButton, el, openDialog, pageHeading, withProgress } from '../dom.js';
import { authenticatorSection } from './account-mfa.js';

interface ApiKeySummary {
  id: string;
  created_at: string;
}

export function accountPage(signedIn: Credentials): HTMLElement {
  return el('main', {}, pageHeading('Account'),
    el('p', {}, signedIn.kind === 'token' ? 'Signed in with a token.' : 'Signed in with an API key.'),
    apiKeysSection(signedIn),
    authenticatorSection(signedIn));
}

function apiKeysSection(signedIn: Credentials): HTMLElement {
  // Key management takes a user's token: a key can neither mint, list nor revoke keys.
  if (signedIn.kind !== 'token') {
    return el('section', { 'aria-labelledby': 'api-keys-title' }, el('h2', { id: 'api-keys-title' }, 'API keys'),
      el('p', {}, 'Managing API keys takes a sign-in with a user\'s token: an API key cannot manage keys.'));
  }
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
