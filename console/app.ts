/**
 * The Flowgate console: plain DOM, no framework. It signs in with a bearer token (from the link
 * `npm start` prints, pasted, or from the stack's Cognito hosted UI) or an API key, kept in this
 * tab's session storage only, and calls the API of the origin it was served from.
 */
import './app.css';
import { api, credentials, type Credentials } from './api.js';
import { ApiError } from './api-errors.js';
import { alertRegion, el, pageHeading, withProgress } from './dom.js';
import { accountPage } from './pages/account.js';
import { bucketPage, bucketsPage } from './pages/buckets.js';
import { objectsPage } from './pages/objects.js';
import { searchIndexesPage, searchIndexPage } from './pages/search.js';
import { streamPage, streamsPage } from './pages/streams.js';
import { dashboardPage } from './pages/dashboard.js';
import { deliveriesPage, deliveryPage } from './pages/deliveries.js';
import { flowPage } from './pages/flow.js';
import { triggersPage } from './pages/triggers.js';
import { authorizeUrl, codeChallenge, completeSignIn, createState, createVerifier, logoutUrl, SignInError, type HostedUiConfig, type PendingSignIn } from './pkce.js';

const PENDING_KEY = 'flowgate.sign-in';
/** The hosted UI sends the browser back here; the stack registers exactly this URL (lib/constructs/identity.ts). */
const redirectUri = () => `${location.origin}/console`;

const root = document.getElementById('app')!;

type Route = { page: 'triggers' } | { page: 'dashboard' } | { page: 'deliveries'; trigger: string; execution?: string; filters?: URLSearchParams } | { page: 'buckets' } | { page: 'bucket'; name: string } | { page: 'objects'; store?: string } | { page: 'account' }
  | { page: 'flow'; name: string } | { page: 'streams'; name?: string } | { page: 'search'; name?: string };

/** A hash segment as typed or linked; a malformed escape is kept as it is (the API then answers not found). */
function segment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function route(): Route {
  const hash = location.hash;
  if (hash === '#/account') return { page: 'account' };
  if (hash === '#/buckets') return { page: 'buckets' };
  if (hash === '#/dashboard') return { page: 'dashboard' };
  const deliveries = /^#\/triggers\/([^/?]+)\/deliveries(?:\/([^/?]+))?(?:\?(.*))?$/.exec(hash);
  if (deliveries) {
    return { page: 'deliveries', trigger: segment(deliveries[1]!), ...(deliveries[2] && { execution: segment(deliveries[2]) }), ...(deliveries[3] && { filters: new URLSearchParams(deliveries[3]) }) };
  }
  const flow = /^#\/flows\/([^/]+)$/.exec(hash);
  if (flow) return { page: 'flow', name: segment(flow[1]!) };
  const stream = /^#\/streams(?:\/(.+))?$/.exec(hash);
  if (stream) return { page: 'streams', ...(stream[1] && { name: segment(stream[1]) }) };
  const searchIndex = /^#\/search(?:\/(.+))?$/.exec(hash);
  if (searchIndex) return { page: 'search', ...(searchIndex[1] && { name: segment(searchIndex[1]) }) };
  const objects = /^#\/objects(?:\/(.+))?$/.exec(hash);
  if (objects) return { page: 'objects', ...(objects[1] && { store: segment(objects[1]) }) };
  const bucket = /^#\/buckets\/(.+)$/.exec(hash);
  if (bucket) {
    return { page: 'bucket', name: segment(bucket[1]!) };
  }
  return { page: 'triggers' };
}

function render(): void {
  const signedIn = credentials.get();
  if (!signedIn) {
    root.replaceChildren(signInPage());
  } else {
    const current = route();
    const page = current.page === 'account' ? accountPage(signedIn)
      : current.page === 'dashboard' ? dashboardPage()
      : current.page === 'buckets' ? bucketsPage()
        : current.page === 'bucket' ? bucketPage(current.name)
        : current.page === 'objects' ? objectsPage(current.store)
          : current.page === 'deliveries' ? (current.execution ? deliveryPage(current.trigger, current.execution) : deliveriesPage(current.trigger, current.filters))
            : current.page === 'flow' ? flowPage(current.name)
            : current.page === 'streams' ? (current.name === undefined ? streamsPage() : streamPage(current.name))
            : current.page === 'search' ? (current.name === undefined ? searchIndexesPage() : searchIndexPage(current.name))
              : triggersPage();
    const section = current.page === 'bucket' ? 'buckets' : current.page === 'deliveries' || current.page === 'flow' ? 'triggers' : current.page;
    root.replaceChildren(shell(section, page));
  }
  root.querySelector<HTMLElement>('h1')?.focus();
}

function shell(current: string, page: HTMLElement): HTMLElement {
  const link = (id: string, text: string) => el('li', {}, el('a', { href: `#/${id}`, ...(current === id && { 'aria-current': 'page' }) }, text));
  const signOut = el('button', { type: 'button', class: 'secondary', click: () => {
    const was = credentials.get();
    credentials.clear();
    history.replaceState(null, '', location.pathname);
    render();
    if (was?.via === 'hostedUi') {
      void consoleConfig().then(({ cognito }) => cognito && location.assign(logoutUrl(cognito, redirectUri())), () => undefined);
    }
  } }, 'Sign out');
  return el('div', {},
    el('header', {}, el('strong', {}, 'Flowgate'),
      el('nav', { 'aria-label': 'Main' }, el('ul', {}, link('dashboard', 'Dashboard'), link('triggers', 'Triggers'), link('buckets', 'Buckets'), link('objects', 'Objects'), link('streams', 'Streams'), link('search', 'Search'), link('account', 'Account'))),
      el('span', { class: 'spacer' }), signOut),
    page);
}

/** What the system function says about sign-in (`GET /console/config.json`). */
let configPromise: Promise<{ cognito: HostedUiConfig | null }> | undefined;
const consoleConfig = () => (configPromise ??= fetch('/console/config.json').then(async (response) => {
  if (!response.ok) throw new ApiError('unavailable', response.status);
  return (await response.json()) as { cognito: HostedUiConfig | null };
}).catch((error: unknown) => {
  configPromise = undefined;
  throw error instanceof ApiError ? error : new ApiError('network', 0);
}));

function signInPage(message?: string): HTMLElement {
  const alert = alertRegion();
  if (message) alert.textContent = message;
  const hostedUi = el('div');
  void consoleConfig().then(({ cognito }) => {
    if (!cognito) return;
    const button = el('button', { type: 'button' }, 'Sign in with Cognito');
    button.addEventListener('click', () => void withProgress(button, alert, async () => {
      const pending: PendingSignIn = { state: createState(), verifier: createVerifier() };
      sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
      location.assign(authorizeUrl(cognito, { redirectUri: redirectUri(), state: pending.state, challenge: await codeChallenge(pending.verifier) }));
    }));
    hostedUi.replaceChildren(el('p', {}, 'With your Flowgate user (email, password and authenticator):'), el('div', { class: 'actions' }, button),
      el('p', { class: 'hint' }, 'Or paste a token or an API key below.'));
  }, (error: unknown) => {
    alert.textContent = error instanceof Error ? error.message : String(error);
  });

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
  return el('main', {}, pageHeading('Sign in to Flowgate'), alert, hostedUi, form, el('p', { class: 'hint' }, 'Kept in this browser tab only, until you sign out or close it.'));
}

/**
 * Back from the hosted UI with `?code=&state=` (or `?error=`): exchange the code for an ID token,
 * keep it, and take the code out of the address bar and history whatever happens.
 */
async function finishHostedSignIn(query: URLSearchParams): Promise<string | undefined> {
  const pending = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  history.replaceState(null, '', location.pathname);
  try {
    const { cognito } = await consoleConfig();
    if (!cognito) throw new SignInError('sign_in_refused', 'no hosted UI is configured');
    const idToken = await completeSignIn(cognito, query, pending ? (JSON.parse(pending) as PendingSignIn) : undefined, redirectUri());
    credentials.set({ kind: 'token', value: idToken, via: 'hostedUi' });
    return undefined;
  } catch (error) {
    return new ApiError(error instanceof SignInError ? error.code : 'network', 0).message;
  }
}

async function start(): Promise<void> {
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
  const query = new URLSearchParams(location.search);
  if (query.has('state') && (query.has('code') || query.has('error'))) {
    root.replaceChildren(el('main', { 'aria-busy': 'true' }, el('p', {}, 'Signing in…')));
    const failure = await finishHostedSignIn(query);
    if (failure) {
      root.replaceChildren(signInPage(failure));
      root.querySelector<HTMLElement>('h1')?.focus();
      window.addEventListener('hashchange', render);
      return;
    }
  }
  window.addEventListener('hashchange', render);
  render();
}

void start();
