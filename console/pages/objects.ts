/** The Objects page: the account's object stores with their usage, and one store's objects by prefix, uploads, downloads, deletes and purge. */
import { api } from '../api.js';
import { alertRegion, el, field, openDialog, pageHeading, purgeButton, textInput, withProgress } from '../dom.js';

interface ObjectStore {
  name: string;
  description: string | null;
  objects: number;
  bytes: number;
  max_bytes: number | null;
  ttl_seconds: number | null;
}

interface StoredObject {
  key: string;
  size: number;
  content_type: string;
  last_modified: string;
}

/** One presigned upload as `POST …/uploads` answers it: a single URL, or one URL a part. */
interface UploadTarget {
  id: string;
  url?: string;
  headers?: Record<string, string>;
  parts?: { part_number: number; size: number; url: string }[];
}

const OBJECTS_PER_PAGE = 100;

const storeHref = (name: string) => `#/objects/${encodeURIComponent(name)}`;
const storePath = (name: string) => `/storage/objects/${encodeURIComponent(name)}`;
/** An object's URL (`…/object`, or `…/object/url` for its presigned GET): the key in `?key=`, which any key survives. */
const objectPath = (store: string, key: string, action: '' | '/url' = '') =>
  `${storePath(store)}/object${action}?${new URLSearchParams({ key })}`;

const sizeText = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : bytes < 1024 ** 3 ? `${(bytes / 1024 ** 2).toFixed(1)} MiB` : `${(bytes / 1024 ** 3).toFixed(2)} GiB`;

/** A PUT straight to S3 that reports its progress (fetch reports none for uploads); resolves to the ETag S3 answered. */
function putWithProgress(url: string, body: Blob, headers: Record<string, string>, onProgress: (sent: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('PUT', url);
    for (const [name, value] of Object.entries(headers)) request.setRequestHeader(name, value);
    request.upload.addEventListener('progress', (event) => onProgress(event.loaded));
    request.addEventListener('load', () => (request.status === 200 ? resolve(request.getResponseHeader('etag') ?? '') : reject(new Error(`The storage refused the upload (${request.status}).`))));
    request.addEventListener('error', () => reject(new Error('The upload could not reach the storage.')));
    request.send(body);
  });
}

export function objectsPage(store?: string): HTMLElement {
  return store === undefined ? storesPage() : storePage(store);
}

function storesPage(): HTMLElement {
  const alert = alertRegion();
  const listing = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading object stores…'));
  void withProgress(listing, alert, async () => {
    const page = await api<{ stores: ObjectStore[] }>('GET', '/storage/objects?limit=100');
    listing.replaceChildren(page.stores.length === 0
      ? el('p', {}, 'No object stores yet. Create one below or with PUT /storage/objects/{store}.')
      : el('table', {}, el('caption', { class: 'hint' }, 'Your object stores'),
        el('thead', {}, el('tr', {}, ...['Name', 'Objects', 'Bytes', 'Limit', 'Objects expire after'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, ...page.stores.map((s) => el('tr', {},
          el('td', {}, el('a', { href: storeHref(s.name) }, s.name)),
          el('td', {}, String(s.objects)),
          el('td', {}, sizeText(s.bytes)),
          el('td', {}, s.max_bytes === null ? 'None' : sizeText(s.max_bytes)),
          el('td', {}, s.ttl_seconds === null ? 'Never' : `${s.ttl_seconds} s`))))));
  });

  const newName = textInput('', { required: true, pattern: '[A-Za-z0-9_-]{1,64}', maxlength: '64' });
  const create = el('button', { type: 'submit' }, 'Create');
  const createForm = el('form', { 'aria-labelledby': 'new-store-title' },
    field('new-store-name', 'Store name', newName, 'Letters, digits, _ and -, up to 64 characters.'),
    el('div', { class: 'actions' }, create));
  createForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void withProgress(create, alert, async () => {
      const name = newName.value.trim();
      await api('PUT', storePath(name), {});
      location.hash = storeHref(name);
    });
  });
  return el('main', {}, pageHeading('Objects'), alert,
    el('section', { 'aria-labelledby': 'new-store-title' }, el('h2', { id: 'new-store-title' }, 'New object store'), createForm),
    el('h2', {}, 'Your object stores'), listing);
}

function storePage(name: string): HTMLElement {
  const alert = alertRegion();
  const notice = el('div', { 'aria-live': 'polite' });
  const usage = el('p', { class: 'hint' });
  const where = el('p', { 'aria-live': 'polite' });
  const rows = el('tbody');
  const more = el('button', { type: 'button', class: 'secondary', hidden: true }, 'More objects');
  let prefix = '';
  let cursor: string | null = null;

  const showUsage = async () => {
    const store = await api<ObjectStore>('GET', storePath(name));
    usage.textContent = `${store.objects} object${store.objects === 1 ? '' : 's'}, ${sizeText(store.bytes)}${store.max_bytes === null ? '' : ` of ${sizeText(store.max_bytes)}`}.`;
  };

  const load = (control: HTMLElement, fresh: boolean) => withProgress(control, alert, async () => {
    if (fresh) cursor = null;
    const query = new URLSearchParams({ delimiter: '/', limit: String(OBJECTS_PER_PAGE) });
    if (prefix) query.set('prefix', prefix);
    if (cursor) query.set('cursor', cursor);
    const [page] = await Promise.all([
      api<{ objects: StoredObject[]; prefixes: string[]; next_cursor: string | null }>('GET', `${storePath(name)}/objects?${query}`),
      showUsage(),
    ]);
    if (fresh) rows.replaceChildren();
    rows.append(
      ...page.prefixes.map((folder) => el('tr', {},
        el('td', {}, el('button', { type: 'button', class: 'link', click: () => { prefix = folder; void load(rows, true); } }, folder.slice(prefix.length))),
        el('td', {}, 'Folder'), el('td', {}), el('td', {}), el('td', {}))),
      ...page.objects.map((object) => objectRow(object)));
    cursor = page.next_cursor;
    more.hidden = cursor === null;
    where.replaceChildren(prefix ? `In ${prefix} ` : 'At the top of the store ', ...(prefix ? [el('button', { type: 'button', class: 'link', click: () => { prefix = prefix.slice(0, prefix.slice(0, -1).lastIndexOf('/') + 1); void load(rows, true); } }, 'Up one level')] : []));
    if (!rows.firstChild) rows.append(el('tr', {}, el('td', { colspan: '5' }, 'Nothing here yet.')));
  });
  const reload = () => load(rows, true);

  const objectRow = (object: StoredObject) => {
    const label = object.key.slice(prefix.length);
    const download = el('button', { type: 'button', class: 'secondary', 'aria-label': `Download ${label}` }, 'Download');
    download.addEventListener('click', () => void withProgress(download, alert, async () => {
      const { url } = await api<{ url: string }>('POST', objectPath(name, object.key, '/url'), {});
      const response = await fetch(url);
      if (!response.ok) throw new Error(`The storage answered ${response.status}.`);
      const link = el('a', { href: URL.createObjectURL(await response.blob()), download: label.split('/').pop() ?? label });
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    }));
    const remove = el('button', { type: 'button', class: 'secondary', 'aria-label': `Delete ${label}` }, 'Delete');
    remove.addEventListener('click', () => openDialog({
      title: `Delete ${label}?`,
      content: [el('p', {}, `"${object.key}" is deleted from ${name} at once.`)],
      confirm: 'Delete',
      opener: remove,
      action: async () => {
        await api('DELETE', objectPath(name, object.key));
        notice.replaceChildren(el('p', { class: 'notice' }, `Deleted "${object.key}".`));
        await reload();
      },
    }));
    return el('tr', {},
      el('td', {}, label), el('td', {}, sizeText(object.size)), el('td', {}, object.content_type),
      el('td', {}, new Date(object.last_modified).toLocaleString()),
      el('td', {}, el('div', { class: 'actions' }, download, remove)));
  };
  more.addEventListener('click', () => void load(more, false));

  // Uploads go from the browser straight to S3 through presigned URLs: one PUT, or one per 5 MiB part.
  const file = el('input', { type: 'file', id: 'upload-file', required: true });
  const progress = el('progress', { max: '1', value: '0', 'aria-label': 'Upload progress' });
  const progressText = el('span', { 'aria-live': 'polite' });
  const send = el('button', { type: 'submit' }, 'Upload');
  const uploadForm = el('form', { 'aria-labelledby': 'upload-title' },
    field('upload-file', 'File', file, 'Stored under the folder shown above, with its own name and type.'),
    el('p', {}, progress, ' ', progressText),
    el('div', { class: 'actions' }, send));
  uploadForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) return;
    void withProgress(send, alert, async () => {
      const key = prefix + chosen.name;
      progress.max = Math.max(chosen.size, 1);
      progress.value = 0;
      const upload = await api<UploadTarget>('POST', `${storePath(name)}/uploads`, { key, size: chosen.size, content_type: chosen.type || 'application/octet-stream' });
      const report = (sent: number) => {
        progress.value = sent;
        progressText.textContent = `${Math.round((100 * sent) / Math.max(chosen.size, 1))}%`;
      };
      let parts: { part_number: number; etag: string }[] | undefined;
      if (upload.url) {
        await putWithProgress(upload.url, chosen, upload.headers ?? {}, report);
      } else {
        parts = [];
        let offset = 0;
        for (const part of upload.parts!) {
          const start = offset;
          parts.push({ part_number: part.part_number, etag: await putWithProgress(part.url, chosen.slice(start, start + part.size), {}, (sent) => report(start + sent)) });
          offset += part.size;
        }
      }
      await api('POST', `${storePath(name)}/uploads/${upload.id}/complete`, parts && { parts });
      report(chosen.size);
      notice.replaceChildren(el('p', { class: 'notice' }, `Uploaded "${key}".`));
      uploadForm.reset();
      await reload();
    });
  });

  const purge = purgeButton({
    name, kind: 'store', contents: 'Every object in this store', notice,
    purge: () => api('DELETE', `${storePath(name)}/purge`),
    done: () => {
      prefix = '';
      return reload();
    },
  });

  void load(rows, true);
  return el('main', {},
    el('p', {}, el('a', { href: '#/objects' }, 'All object stores')),
    pageHeading(`Object store ${name}`), alert, notice, usage,
    el('section', { 'aria-labelledby': 'objects-title' }, el('h2', { id: 'objects-title' }, 'Objects'), where,
      el('table', {}, el('caption', { class: 'hint' }, `Objects in ${name}`),
        el('thead', {}, el('tr', {}, ...['Name', 'Size', 'Type', 'Modified', 'Actions'].map((h) => el('th', { scope: 'col' }, h)))),
        rows),
      more),
    el('section', { 'aria-labelledby': 'upload-title' }, el('h2', { id: 'upload-title' }, 'Upload a file'), uploadForm),
    el('section', { 'aria-labelledby': 'purge-title' }, el('h2', { id: 'purge-title' }, 'Purge'), el('p', {}, 'Remove every object and keep the store.'), purge));
}
