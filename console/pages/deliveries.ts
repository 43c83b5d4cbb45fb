/**
 * A trigger's deliveries (newest first, refreshing while open, filtered by status and type, "Replay
 * failed") and one delivery's detail: its request, the flow's output or error, the attempts, "Replay".
 */
import { api } from '../api.js';
import { actionButton, alertRegion, el, field, pageHeading, scrollableText, select, textInput, withProgress, type Child } from '../dom.js';
import { triggerChart } from './charts.js';
import { fixedAnswerSummary } from './fixed-answer.js';
import { flowLink } from './flow.js';
import type { Trigger } from './triggers.js';
import type { ExecutionDetail, ReplySummary } from '../../functions/domain/flows/ports.js';

/**
 * A delivery as the API returns it: the functions' own type (`GET /triggers/{id}/executions[/{execution_id}]`
 * send it as is), imported for its shape only, so the console cannot drift from it.
 */
type Delivery = ExecutionDetail;

/** How often an open list or an unfinished delivery is read again. */
const REFRESH_MS = 2_500;
const PAGE = 50;
const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'refused', 'ignored', 'duplicate', 'handshake'] as const;
/** Both unfinished statuses at once: what a chart's "queued" segment opens. */
const UNFINISHED_FILTER = 'queued,running';
const UNFINISHED = new Set(['queued', 'running']);

/** Why the receiver refused a delivery, in words (the `error` of a `refused` execution). */
const REFUSALS: Record<string, string> = {
  invalid_signature: 'The signature did not match the trigger\'s signing secret, was missing, or its timestamp was too old.',
  unauthorized: 'The API key was missing or wrong.',
  ip_not_allowed: 'It came from an address the trigger does not allow.',
  payload_too_large: 'The body, or the flow input made from it, was too large.',
  unsupported_media_type: 'Its content type is not JSON, a form or multipart form data.',
  validation_error: 'The body did not parse as its content type said.',
  method_not_allowed: 'It was not a POST.',
};

const deliveriesPath = (triggerId: string, suffix = '') => `/triggers/${encodeURIComponent(triggerId)}${suffix}`;
/** The deliveries page, optionally with filters (`status`, `since`, `until`), as a chart's segment opens it. */
export const deliveriesHash = (triggerId: string, filters?: Record<string, string>) =>
  `#/triggers/${encodeURIComponent(triggerId)}/deliveries${filters ? `?${new URLSearchParams(filters)}` : ''}`;
const deliveryHash = (triggerId: string, executionId: string) => `${deliveriesHash(triggerId)}/${encodeURIComponent(executionId)}`;
const when = (iso: string | undefined) => (iso ? new Date(iso).toLocaleString() : '');
const statusWord = (status: string) => el('span', { class: `status status-${status}` }, status);
/** What a wait-mode flow's shaped reply answered the sender: "Answered 200, text/xml, 123 bytes". */
const replyWords = (reply: ReplySummary) =>
  `Answered ${reply.status}${reply.content_type ? `, ${reply.content_type}` : ''}, ${reply.bytes.toLocaleString()} ${reply.bytes === 1 ? 'byte' : 'bytes'}`;

/**
 * Reads `read` every REFRESH_MS while `node` is on the page and `keepGoing` holds; stops
 * on its own once the page is left. A refresh never takes focus or rebuilds what did not change.
 */
function refreshWhileShown(node: HTMLElement, read: () => Promise<boolean>): void {
  const tick = async () => {
    if (!node.isConnected) return;
    const keepGoing = await read().catch(() => true);
    if (keepGoing && node.isConnected) setTimeout(() => void tick(), REFRESH_MS);
  };
  setTimeout(() => void tick(), REFRESH_MS);
}

export function deliveriesPage(triggerId: string, filters = new URLSearchParams()): HTMLElement {
  const alert = alertRegion();
  const notice = el('div', { 'aria-live': 'polite' });
  const about = el('p', { class: 'hint' });
  const status = select([['', 'Any status'], ...STATUSES.map((s) => [s, s] as const), [UNFINISHED_FILTER, 'queued or running']], filters.get('status') ?? '');
  // A period from the chart: kept while the other filters change, until "All times".
  const since = filters.get('since') ?? undefined;
  const until = filters.get('until') ?? undefined;
  const period = since && until && el('p', { class: 'notice' }, `Received from ${when(since)} to ${when(until)}. `, el('a', { href: deliveriesHash(triggerId) }, 'All times'));
  const type = textInput('', { type: 'search', placeholder: 'invoice.* or invoice.paid' });
  const listing = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading deliveries…'));
  const more = el('button', { type: 'button', class: 'secondary', hidden: true }, 'More');
  let shown = PAGE;
  let lastJson = '';
  let nextCursor: string | null = null;

  const query = () => {
    const params = new URLSearchParams({ limit: String(Math.min(500, shown)) });
    if (status.value) params.set('status', status.value);
    if (period) {
      params.set('since', since!);
      params.set('until', until!);
    }
    if (type.value.trim()) params.set('type', type.value.trim());
    return params.toString();
  };
  const read = async (): Promise<boolean> => {
    const page = await api<{ executions: Delivery[]; next_cursor: string | null }>('GET', deliveriesPath(triggerId, `/executions?${query()}`));
    nextCursor = page.next_cursor;
    more.hidden = nextCursor === null || shown >= 500;
    const json = JSON.stringify(page.executions);
    if (json !== lastJson) {
      lastJson = json;
      listing.replaceChildren(page.executions.length === 0 ? el('p', {}, 'No deliveries match.') : deliveriesTable(triggerId, page.executions));
    }
    listing.removeAttribute('aria-busy');
    return true;
  };
  const reload = () => withProgress(listing, alert, async () => {
    lastJson = '';
    await read();
  });
  status.addEventListener('change', () => {
    shown = PAGE;
    void reload();
  });
  type.addEventListener('change', () => {
    shown = PAGE;
    void reload();
  });
  more.addEventListener('click', () => {
    shown = Math.min(500, shown + PAGE);
    void withProgress(more, alert, async () => void (await read()));
  });

  const replayFailed = actionButton('Replay failed', alert, async () => {
    let replayed = 0;
    let notReplayable = 0;
    let cursor: string | null = null;
    do {
      const result: { replayed: number; not_replayable: number; next_cursor: string | null } =
        await api('POST', deliveriesPath(triggerId, '/replay'), { status: ['failed'], ...(cursor && { cursor }) });
      replayed += result.replayed;
      notReplayable += result.not_replayable;
      cursor = result.next_cursor;
    } while (cursor);
    notice.replaceChildren(el('p', { class: 'notice' },
      replayed === 0 && notReplayable === 0 ? 'No failed deliveries to replay.'
        : `Replayed ${replayed} failed ${replayed === 1 ? 'delivery' : 'deliveries'} through the trigger's current flow${notReplayable ? `; ${notReplayable} could not be replayed (no stored body, or one the receiver would refuse)` : ''}.`));
    await read();
  });

  void withProgress(about, alert, async () => {
    const trigger = await api<Trigger>('GET', deliveriesPath(triggerId));
    about.replaceChildren('Trigger for ', flowLink(trigger.flow), ' at ', el('code', {}, trigger.url), '. ',
      ...(trigger.acknowledge_response ? ['Fixed answer: ', ...fixedAnswerSummary(trigger.acknowledge_response), '. '] : []),
      'Deliveries are kept 7 days; this list refreshes on its own.',
      // Shown by the API this once: Notion asks for it back, and it is the trigger's signing secret.
      ...(trigger.signature?.verification_token
        ? [el('span', { class: 'notice', role: 'status' }, ' Notion\'s verification token, shown this once: paste it into Notion to verify the subscription. ', el('code', {}, trigger.signature.verification_token))]
        : []));
  });
  const main = el('main', {},
    pageHeading('Deliveries'),
    el('p', {}, el('a', { href: '#/triggers' }, 'All triggers')),
    about, alert, notice,
    triggerChart(triggerId, filters.get('chart')),
    el('h2', {}, 'Delivery list'),
    period,
    el('div', { class: 'filters' }, field('delivery-status', 'Status', status), field('delivery-type', 'Type', type, 'Exact, or a prefix ending in *')),
    el('div', { class: 'actions' }, replayFailed),
    listing, more);
  // The first read reports a failure in words; the refreshes after it retry quietly.
  void reload().then(() => refreshWhileShown(main, read));
  return main;
}

function deliveriesTable(triggerId: string, deliveries: Delivery[]): HTMLElement {
  const rows = deliveries.map((d) => el('tr', {},
    el('td', {}, statusWord(d.status)),
    el('td', {}, d.type ?? ''),
    el('td', {}, el('a', { href: deliveryHash(triggerId, d.execution_id), 'aria-label': `Delivery ${d.event_id}, ${d.status}, received ${when(d.received_at)}` }, el('code', {}, d.event_id))),
    el('td', {}, when(d.received_at)),
    el('td', {}, String(d.attempts)),
    el('td', {}, d.replay_of ? 'replay' : d.status === 'refused' ? d.error ?? '' : '')));
  return el('table', {}, el('caption', { class: 'hint' }, 'Deliveries, newest first'),
    el('thead', {}, el('tr', {}, ...['Status', 'Type', 'Event id', 'Received', 'Attempts', 'Note'].map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...rows));
}

export function deliveryPage(triggerId: string, executionId: string): HTMLElement {
  const alert = alertRegion();
  const notice = el('div', { 'aria-live': 'polite' });
  const body = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading the delivery…'));
  const heading = pageHeading('Delivery');
  // The flow the trigger runs, read once (a delivery's record does not name its flow).
  const trigger = api<Trigger>('GET', deliveriesPath(triggerId)).catch(() => undefined);
  let lastJson = '';
  const read = async (): Promise<boolean> => {
    const delivery = await api<Delivery>('GET', deliveriesPath(triggerId, `/executions/${encodeURIComponent(executionId)}`));
    const flow = (await trigger)?.flow;
    const json = JSON.stringify([delivery, flow]);
    if (json !== lastJson) {
      lastJson = json;
      heading.textContent = `Delivery ${delivery.event_id}`;
      body.replaceChildren(...deliveryDetail(triggerId, delivery, alert, notice, flow));
    }
    body.removeAttribute('aria-busy');
    return UNFINISHED.has(delivery.status);
  };
  const main = el('main', {}, heading, el('p', {}, el('a', { href: deliveriesHash(triggerId) }, 'All deliveries of this trigger')), alert, notice, body);
  void withProgress(body, alert, async () => {
    // The first read reports failures; later ones run while the delivery is unfinished.
    if (await read()) refreshWhileShown(main, read);
  });
  return main;
}

/** The statuses of a delivery that a flow ran, runs or will run. */
const RAN_A_FLOW = new Set(['queued', 'running', 'succeeded', 'failed']);

function deliveryDetail(triggerId: string, d: Delivery, alert: HTMLElement, notice: HTMLElement, flow: string | undefined): HTMLElement[] {
  const replay = actionButton('Replay', alert, async () => {
    const replayed = await api<{ execution_id: string }>('POST', deliveriesPath(triggerId, `/executions/${encodeURIComponent(d.execution_id)}/replay`));
    notice.replaceChildren(el('p', { class: 'notice' }, 'Replayed through the trigger\'s current flow as a new delivery: ',
      el('a', { href: deliveryHash(triggerId, replayed.execution_id) }, 'open the replay'), '.'));
  });
  const facts: [string, Child][] = [
    ['Status', statusWord(d.status)],
    ['Event id', el('code', {}, d.event_id)],
    ['Type', d.type ?? '(none)'],
    // The flow the delivery names; one recorded before deliveries named theirs shows the trigger's flow now.
    ...(d.flow ? [['Flow', flowLink(d.flow)] as [string, Child]]
      : flow && RAN_A_FLOW.has(d.status) ? [['Flow', el('span', {}, flowLink(flow), el('span', { class: 'hint' }, " (the trigger's flow now)"))] as [string, Child]] : []),
    ['Received', when(d.received_at)],
    ['Attempts', String(d.attempts)],
  ];
  if (d.status === 'refused' && d.error) facts.push(['Refused because', `${REFUSALS[d.error] ?? d.error} (${d.error})`]);
  else if (d.error) facts.push(['Error', d.error]);
  if (d.next_attempt_at) facts.push(['Next attempt', when(d.next_attempt_at)]);
  if (d.replay_of) facts.push(['Replays', el('a', { href: deliveryHash(triggerId, d.replay_of) }, 'the original delivery')]);
  return [
    el('dl', { class: 'facts' }, ...facts.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value as Node | string)])),
    el('div', { class: 'actions' }, replay),
    el('section', { 'aria-labelledby': 'request-heading' }, el('h2', { id: 'request-heading' }, 'Request'), ...requestView(d.request)),
    el('section', { 'aria-labelledby': 'outcome-heading' }, el('h2', { id: 'outcome-heading' }, 'Outcome'),
      d.reply && el('p', { class: 'reply' }, `${replyWords(d.reply)} (the reply the flow shaped; its body is in the output below).`),
      d.output !== undefined ? scrollableText('Flow output', JSON.stringify(d.output, null, 2))
        : el('p', {}, d.status === 'refused' ? 'No flow ran.' : d.error ? `The flow failed: ${d.error}` : UNFINISHED.has(d.status) ? 'Not finished yet.' : 'No output.')),
    el('section', { 'aria-labelledby': 'attempts-heading' }, el('h2', { id: 'attempts-heading' }, 'Attempts'),
      d.timeline.length === 0 ? el('p', {}, 'No runs.') : el('table', {},
        el('thead', {}, el('tr', {}, ...['Attempt', 'Started', 'Finished', 'Status', 'Error'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, ...d.timeline.map((a) => el('tr', {},
          el('td', {}, String(a.attempt)), el('td', {}, when(a.started_at)), el('td', {}, when(a.finished_at)), el('td', {}, statusWord(a.status)), el('td', {}, a.error ?? '')))))),
  ];
}

const pairsTable = (caption: string, pairs: [string, string][]) => el('table', {}, el('caption', { class: 'hint' }, caption),
  el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Name'), el('th', { scope: 'col' }, 'Value'))),
  el('tbody', {}, ...pairs.map(([name, value]) => el('tr', {}, el('td', {}, el('code', {}, name)), el('td', {}, el('code', {}, value))))));

function requestView(request: Delivery['request']): Child[] {
  if (!request) return [el('p', {}, 'The request was not stored.')];
  const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const queryPairs = Object.entries(request.query);
  return [
    el('p', {}, `${request.method} from ${request.source_ip ?? 'an unknown address'}, ${request.body_bytes.toLocaleString()} bytes.`),
    pairsTable('Headers (credentials shown as [redacted])', Object.entries(request.headers)),
    queryPairs.length > 0 && pairsTable('Query string', queryPairs),
    el('h3', {}, 'Body'),
    bodyView(request, contentType),
  ];
}

function bodyView(request: NonNullable<Delivery['request']>, contentType: string): HTMLElement {
  if (request.body === undefined) return el('p', {}, 'The body was over the size limit and was not kept.');
  if (request.body_encoding === 'base64') {
    return el('div', {}, el('p', {}, `Binary content (${contentType || 'no content type'}), shown as base64.`),
      el('details', {}, el('summary', {}, 'Raw body, base64'), scrollableText('Raw body, base64', request.body)));
  }
  if (contentType === 'application/json') {
    try {
      return scrollableText('Request body', JSON.stringify(JSON.parse(request.body), null, 2));
    } catch {
      // Not valid JSON after all: shown as sent.
    }
  }
  if (contentType === 'application/x-www-form-urlencoded') {
    return pairsTable('Form fields', [...new URLSearchParams(request.body)]);
  }
  return scrollableText('Request body', request.body);
}
