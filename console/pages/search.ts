/** The Search page: the account's search indexes with their counts, and one index's query box (hits, highlights, facets), documents by id and purge. */
import { api } from '../api.js';
import { alertRegion, el, field, pageHeading, purgeButton, scrollableText, textInput, withProgress } from '../dom.js';

interface SearchIndex {
  name: string;
  searchable_fields: { field: string; weight: number }[];
  filterable_fields: { field: string; type: string }[];
  documents: number;
  bytes: number;
  pending_documents: number;
}
interface Hit { id: string; score: number; document: Record<string, unknown>; highlights?: Record<string, string> }
interface Answer { hits: Hit[]; total: number; total_relation: 'eq' | 'gte'; facets?: Record<string, { values: { value: unknown; count: number }[]; exhaustive: boolean }>; took_ms: number }

const indexPath = (name: string) => `/storage/search/${encodeURIComponent(name)}`;
const count = (n: number) => n.toLocaleString('en');
/** Tags the API never sends in text (control characters), so a highlight becomes text and <mark> elements without parsing HTML. */
const PRE = '\u0001';
const POST = '\u0002';
const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** A highlight as DOM nodes: text between the tags marked, nothing interpreted as HTML. */
function highlighted(text: string): Node[] {
  const plain = text.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);
  return plain.split(PRE).flatMap((part, i) => {
    if (i === 0) return [document.createTextNode(part)];
    const [marked = '', rest = ''] = part.split(POST);
    return [el('mark', {}, marked), document.createTextNode(rest)];
  });
}

export function searchIndexesPage(): HTMLElement {
  const alert = alertRegion();
  const listing = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading indexes…'));
  void withProgress(listing, alert, async () => {
    const page = await api<{ indexes: SearchIndex[] }>('GET', '/storage/search?limit=100');
    listing.removeAttribute('aria-busy');
    if (page.indexes.length === 0) {
      listing.replaceChildren(el('p', {}, 'No search indexes yet. Create one with PUT /storage/search/{index}.'));
      return;
    }
    listing.replaceChildren(el('table', {}, el('caption', { class: 'hint' }, 'Your search indexes'),
      el('thead', {}, el('tr', {}, ...['Name', 'Documents', 'Bytes', 'Not yet indexed', 'Searchable fields'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, ...page.indexes.map((ix) => el('tr', {},
        el('td', {}, el('a', { href: `#/search/${encodeURIComponent(ix.name)}` }, ix.name)),
        el('td', {}, count(ix.documents)), el('td', {}, count(ix.bytes)), el('td', {}, count(ix.pending_documents)),
        el('td', {}, ix.searchable_fields.map((f) => (f.weight === 1 ? f.field : `${f.field} ×${f.weight}`)).join(', ')))))));
  });
  return el('main', {}, pageHeading('Search'), alert, el('h2', {}, 'Your search indexes'), listing);
}

export function searchIndexPage(name: string): HTMLElement {
  const alert = alertRegion();
  const notice = el('div', {});
  const summary = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading…'));
  let facetFields: string[] = [];
  const loadSummary = () => withProgress(summary, alert, async () => {
    const ix = await api<SearchIndex>('GET', indexPath(name));
    facetFields = ix.filterable_fields.filter((f) => f.type !== 'number').map((f) => f.field).slice(0, 10);
    summary.removeAttribute('aria-busy');
    summary.replaceChildren(el('dl', {}, ...([['Documents', count(ix.documents)], ['Bytes', count(ix.bytes)], ['Not yet indexed', count(ix.pending_documents)]] as const)
      .flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)])));
  });

  const q = textInput('', { type: 'search', autocomplete: 'off' });
  const status = el('p', { 'aria-live': 'polite', class: 'hint' });
  const hits = el('ol', { class: 'hits' });
  const facets = el('div', {});
  const run = el('button', { type: 'submit' }, 'Search');
  const search = (control: HTMLElement) => withProgress(control, alert, async () => {
    const answer = await api<Answer>('POST', `${indexPath(name)}/query`, { q: q.value, highlight: { pre_tag: PRE, post_tag: POST }, facets: facetFields, limit: 20 });
    status.textContent = `${answer.total_relation === 'gte' ? 'At least ' : ''}${count(answer.total)} ${answer.total === 1 ? 'match' : 'matches'} in ${answer.took_ms} ms.`;
    hits.replaceChildren(...answer.hits.map((hit) => el('li', {},
      el('p', {}, el('strong', {}, hit.id), el('span', { class: 'hint' }, ` score ${hit.score.toFixed(3)}`)),
      ...Object.entries(hit.highlights ?? {}).map(([fieldName, text]) => el('p', {}, el('span', { class: 'hint' }, `${fieldName}: `), ...highlighted(text))))));
    facets.replaceChildren(...Object.entries(answer.facets ?? {}).map(([fieldName, facet]) => el('section', {},
      el('h3', {}, `${fieldName}${facet.exhaustive ? '' : ' (of the first 1,000 matches)'}`),
      el('ul', {}, ...facet.values.map((v) => el('li', {}, `${String(v.value)}: ${count(v.count)}`))))));
  });
  const queryForm = el('form', { role: 'search', 'aria-label': `Search ${name}` }, field('search-q', 'Search', q, 'Search as you type: the last word matches as a prefix; words of 5 or more letters within a typo.'), el('div', { class: 'actions' }, run));
  queryForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void search(run);
  });

  const docId = textInput();
  const show = el('button', { type: 'submit' }, 'Show');
  const docView = el('div', {});
  const docForm = el('form', { 'aria-label': 'A document by id' }, field('search-doc-id', 'Document id', docId), el('div', { class: 'actions' }, show));
  docForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void withProgress(show, alert, async () => {
      const doc = await api<{ id: string; document: unknown }>('GET', `${indexPath(name)}/documents/${encodeURIComponent(docId.value)}`);
      docView.replaceChildren(scrollableText(`Document ${doc.id}`, JSON.stringify(doc.document, null, 2)));
    });
  });

  const purge = purgeButton({
    name, kind: 'index', contents: 'Every document in this index', notice,
    purge: () => api('DELETE', `${indexPath(name)}/purge`),
    done: () => loadSummary(),
  });

  void loadSummary().then(() => search(hits));
  return el('main', {},
    el('p', {}, el('a', { href: '#/search' }, 'All search indexes')),
    pageHeading(`Search index ${name}`), alert, notice, summary,
    el('section', { 'aria-labelledby': 'query-title' }, el('h2', { id: 'query-title' }, 'Query'), queryForm, status, hits, facets),
    el('section', { 'aria-labelledby': 'doc-title' }, el('h2', { id: 'doc-title' }, 'Documents by id'), docForm, docView),
    el('section', { 'aria-labelledby': 'purge-title' }, el('h2', { id: 'purge-title' }, 'Purge'), el('p', {}, 'Remove every document and keep the settings.'), purge));
}
