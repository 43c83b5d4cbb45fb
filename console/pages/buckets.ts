/** The Buckets page: the account's buckets, and one bucket's keys, values, writes, deletes and purge. */
import { api, apiBytes, keyPath } from '../api.js';
import { alertRegion, el, field, openDialog, pageHeading, purgeButton, scrollableText, textInput, withProgress } from '../dom.js';

interface Bucket {
  name: string;
  description: string | null;
  ttl_seconds: number | null;
  created_at: string;
}

/** Keys per page of the key listing. */
const KEYS_PER_PAGE = 50;

const bucketHref = (name: string) => `#/buckets/${encodeURIComponent(name)}`;

export function bucketsPage(): HTMLElement {
  const alert = alertRegion();
  const listing = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading buckets…'));
  const table = el('tbody');
  const more = el('button', { type: 'button', class: 'secondary', hidden: true }, 'More buckets');
  let cursor: string | null = null;

  const loadPage = (control: HTMLElement) => withProgress(control, alert, async () => {
    const page = await api<{ buckets: Bucket[]; next_cursor: string | null }>('GET', `/storage/kv?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    table.append(...page.buckets.map((b) => el('tr', {},
      el('td', {}, el('a', { href: bucketHref(b.name) }, b.name)),
      el('td', {}, b.description ?? ''),
      el('td', {}, b.ttl_seconds === null ? 'Never' : `${b.ttl_seconds} s`),
      el('td', {}, new Date(b.created_at).toLocaleString()))));
    cursor = page.next_cursor;
    more.hidden = cursor === null;
    if (!table.firstChild) listing.replaceChildren(el('p', {}, 'No buckets yet. Create one with PUT /storage/kv/{bucket}.'));
    else if (!table.isConnected) {
      listing.replaceChildren(el('table', {}, el('caption', { class: 'hint' }, 'Your buckets'),
        el('thead', {}, el('tr', {}, ...['Name', 'Description', 'Values expire after', 'Created'].map((h) => el('th', { scope: 'col' }, h)))),
        table), more);
    }
  });
  more.addEventListener('click', () => void loadPage(more));
  void loadPage(listing);

  // A new bucket with the default configuration; the API takes the rest (description, ttl_seconds, max_value_bytes).
  const newName = textInput('', { required: true, pattern: '[A-Za-z0-9_-]{1,64}', maxlength: '64' });
  const create = el('button', { type: 'submit' }, 'Create');
  const createForm = el('form', { 'aria-labelledby': 'new-bucket-title' },
    field('new-bucket-name', 'Bucket name', newName, 'Letters, digits, _ and -, up to 64 characters.'),
    el('div', { class: 'actions' }, create));
  createForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void withProgress(create, alert, async () => {
      const name = newName.value.trim();
      // Create only: a plain PUT of an existing bucket would reset its configuration to the defaults.
      await api('PUT', `/storage/kv/${encodeURIComponent(name)}`, {}, undefined, { 'if-none-match': '*' });
      location.hash = bucketHref(name);
    });
  });
  return el('main', {}, pageHeading('Buckets'), alert,
    el('section', { 'aria-labelledby': 'new-bucket-title' }, el('h2', { id: 'new-bucket-title' }, 'New bucket'), createForm),
    el('h2', {}, 'Your buckets'), listing);
}

export function bucketPage(name: string): HTMLElement {
  const alert = alertRegion();
  const notice = el('div', { 'aria-live': 'polite' });

  // Keys: a prefix search and pages of keys; choosing one shows its value below.
  const prefix = textInput('', { type: 'search' });
  const search = el('button', { type: 'submit' }, 'Search');
  const keys = el('ul', { class: 'keys', 'aria-labelledby': 'keys-title' });
  const keysStatus = el('p', { 'aria-live': 'polite', class: 'hint' });
  const more = el('button', { type: 'button', class: 'secondary', hidden: true }, 'More keys');
  let cursor: string | null = null;
  let searched = '';

  const valueSection = el('section', { 'aria-labelledby': 'value-title', hidden: true });

  const loadKeys = (control: HTMLElement, fresh: boolean) => withProgress(control, alert, async () => {
    if (fresh) {
      searched = prefix.value;
      cursor = null;
    }
    const query = new URLSearchParams({ limit: String(KEYS_PER_PAGE) });
    if (searched) query.set('prefix', searched);
    if (cursor) query.set('cursor', cursor);
    const page = await api<{ keys: string[]; next_cursor: string | null }>('GET', `/storage/kv/${encodeURIComponent(name)}/keys?${query}`);
    if (fresh) keys.replaceChildren();
    keys.append(...page.keys.map((key) => {
      const open = el('button', { type: 'button', class: 'link' }, key);
      open.addEventListener('click', () => void showValue(key, open));
      return el('li', {}, open);
    }));
    cursor = page.next_cursor;
    more.hidden = cursor === null;
    const count = keys.childElementCount;
    keysStatus.textContent = count === 0
      ? (searched ? `No key starts with "${searched}".` : 'This bucket holds no values.')
      : `${count} key${count === 1 ? '' : 's'}${searched ? ` starting with "${searched}"` : ''}${cursor ? ', more to load' : ''}.`;
  });

  const showValue = (key: string, control: HTMLElement) => withProgress(control, alert, async () => {
    const value = await apiBytes('GET', keyPath(name, key));
    let text: string | undefined;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(value.bytes);
    } catch {
      text = undefined; // not UTF-8: said so below rather than shown garbled
    }
    const remove = el('button', { type: 'button', class: 'secondary' }, 'Delete');
    remove.addEventListener('click', () => openDialog({
      title: 'Delete this value?',
      content: [el('p', {}, `The value of "${key}" in ${name} is deleted at once.`)],
      confirm: 'Delete',
      opener: remove,
      action: async () => {
        await api('DELETE', keyPath(name, key));
        valueSection.hidden = true;
        notice.replaceChildren(el('p', { class: 'notice' }, `Deleted "${key}".`));
        await reloadKeys();
      },
    }));
    valueSection.replaceChildren(
      el('h2', { id: 'value-title' }, `Value of "${key}"`),
      el('p', { class: 'hint' }, `Content type: ${value.contentType || 'unknown'}`),
      text === undefined
        ? el('p', {}, `${value.bytes.length} bytes that are not UTF-8 text; read them through the API.`)
        : scrollableText(`Content of ${key}`, text),
      el('div', { class: 'actions' }, remove));
    valueSection.hidden = false;
    valueSection.querySelector<HTMLElement>('h2')?.setAttribute('tabindex', '-1');
    valueSection.querySelector<HTMLElement>('h2')?.focus();
  });
  const reloadKeys = () => loadKeys(search, true);

  const searchForm = el('form', { role: 'search', 'aria-label': 'Keys' },
    field('key-prefix', 'Key prefix', prefix, 'Keys starting with this text; empty lists every key.'),
    el('div', { class: 'actions' }, search));
  searchForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void loadKeys(search, true);
  });
  more.addEventListener('click', () => void loadKeys(more, false));

  // Writing a value: stored as UTF-8 text.
  const bucketField = textInput(name, { required: true });
  const keyField = textInput('', { required: true });
  const valueField = el('textarea', { rows: '4' });
  const save = el('button', { type: 'submit' }, 'Save');
  const writeForm = el('form', { 'aria-labelledby': 'write-title' },
    field('write-bucket', 'Bucket', bucketField),
    field('write-key', 'Key', keyField),
    field('write-value', 'Value', valueField, 'Stored as UTF-8 text (text/plain).'),
    el('div', { class: 'actions' }, save));
  writeForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void withProgress(save, alert, async () => {
      const bucket = bucketField.value.trim();
      const key = keyField.value;
      if (!key) throw new Error('Enter a key.');
      await apiBytes('PUT', keyPath(bucket, key), valueField.value);
      notice.replaceChildren(el('p', { class: 'notice' }, `Saved "${key}" in ${bucket}.`));
      if (bucket === name) await reloadKeys();
    });
  });

  const purge = purgeButton({
    name, kind: 'bucket', contents: 'Every value in this bucket', notice,
    purge: () => api('DELETE', `/storage/kv/${encodeURIComponent(name)}/purge`),
    done: () => {
      valueSection.hidden = true;
      return reloadKeys();
    },
  });

  void loadKeys(keys, true);
  return el('main', {},
    el('p', {}, el('a', { href: '#/buckets' }, 'All buckets')),
    pageHeading(`Bucket ${name}`), alert, notice,
    el('section', { 'aria-labelledby': 'keys-title' }, el('h2', { id: 'keys-title' }, 'Keys'), searchForm, keysStatus, keys, more),
    valueSection,
    el('section', { 'aria-labelledby': 'write-title' }, el('h2', { id: 'write-title' }, 'Write a value'), writeForm),
    el('section', { 'aria-labelledby': 'purge-title' }, el('h2', { id: 'purge-title' }, 'Purge'), el('p', {}, 'Remove every value and keep the bucket.'), purge));
}


