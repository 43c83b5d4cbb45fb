/** The Streams page: the account's streams with their counts and publishes, and one stream's messages and consumers. */
import { api } from '../api.js';
import { alertRegion, el, field, pageHeading, textInput, withProgress } from '../dom.js';
import { OUTCOMES, type Bar } from './chart-layout.js';
import { sparkline } from './charts.js';

interface Stream {
  name: string;
  description: string | null;
  messages: number;
  bytes: number;
  first_seq: number;
  last_seq: number;
  last_ts: string | null;
  consumers: number;
}

interface Message {
  seq: number;
  ts: string;
  data: unknown;
  msg_id: string | null;
}

interface Consumer {
  name: string;
  deliver_policy: string;
  num_pending: number;
  num_ack_pending: number;
  ack_floor: number;
  delivered_seq: number;
  num_redelivered: number;
}

/** Messages per page of a stream's messages. */
const MESSAGES_PER_PAGE = 50;
/** The sparkline counts the publish times of a stream's latest messages, at most this many (one read). */
const SPARKLINE_MESSAGES = 200;
const HOUR_MS = 3_600_000;
/** Characters of a message's data shown in the table; the API has the rest. */
const DATA_PREVIEW_CHARS = 200;

const streamPath = (name: string) => `/storage/streams/${encodeURIComponent(name)}`;
const streamHref = (name: string) => `#/streams/${encodeURIComponent(name)}`;
const count = (n: number) => n.toLocaleString('en');

/**
 * Messages published in each of the last 24 hours, from the stream's latest messages. There is no
 * publish counter to read, so a busy stream's older hours are counted from the messages it still
 * holds, up to `SPARKLINE_MESSAGES`; the words beside the chart say "at least" then.
 */
async function publishActivity(stream: Stream): Promise<HTMLElement> {
  const now = Date.now();
  const start = Math.floor(now / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
  const bars: Bar[] = Array.from({ length: 24 }, (_, i) => ({
    start: start + i * HOUR_MS, end: start + (i + 1) * HOUR_MS, total: 0,
    ...Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<(typeof OUTCOMES)[number], number>,
  }));
  let partial = false;
  if (stream.messages > 0) {
    const after = Math.max(stream.first_seq - 1, stream.last_seq - SPARKLINE_MESSAGES);
    const page = await api<{ messages: Message[] }>('GET', `${streamPath(stream.name)}/messages?after_seq=${after}&limit=${SPARKLINE_MESSAGES}`);
    for (const message of page.messages) {
      const bar = bars[Math.floor((Date.parse(message.ts) - start) / HOUR_MS)];
      if (bar) {
        bar.total++;
        bar.succeeded++;
      }
    }
    partial = after > stream.first_seq - 1 && Date.parse(page.messages[0]?.ts ?? '') >= start;
  }
  const total = bars.reduce((sum, bar) => sum + bar.total, 0);
  const words = `${partial ? 'At least ' : ''}${count(total)} ${total === 1 ? 'publish' : 'publishes'} in the last 24 hours`;
  return el('div', { class: 'activity' }, sparkline(bars, words), el('span', { class: 'hint' }, words));
}

export function streamsPage(): HTMLElement {
  const alert = alertRegion();
  const listing = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading streams…'));
  const table = el('tbody');
  const more = el('button', { type: 'button', class: 'secondary', hidden: true }, 'More streams');
  let cursor: string | null = null;

  const loadPage = (control: HTMLElement) => withProgress(control, alert, async () => {
    const page = await api<{ streams: Stream[]; next_cursor: string | null }>('GET', `/storage/streams?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    table.append(...page.streams.map((s) => {
      const activity = el('td', {}, el('span', { class: 'hint' }, 'Loading…'));
      void publishActivity(s).then((chart) => activity.replaceChildren(chart), () => activity.replaceChildren(el('span', { class: 'hint' }, 'Not available')));
      return el('tr', {},
        el('td', {}, el('a', { href: streamHref(s.name) }, s.name)),
        el('td', {}, s.description ?? ''),
        el('td', {}, count(s.messages)),
        el('td', {}, count(s.bytes)),
        el('td', {}, s.messages > 0 ? `${count(s.first_seq)}–${count(s.last_seq)}` : 'None'),
        el('td', {}, count(s.consumers)),
        activity);
    }));
    cursor = page.next_cursor;
    more.hidden = cursor === null;
    if (!table.firstChild) listing.replaceChildren(el('p', {}, 'No streams yet. Create one with PUT /storage/streams/{stream}.'));
    else if (!table.isConnected) {
      listing.replaceChildren(el('table', {}, el('caption', { class: 'hint' }, 'Your streams'),
        el('thead', {}, el('tr', {}, ...['Name', 'Description', 'Messages', 'Bytes', 'Sequences', 'Consumers', 'Publishes'].map((h) => el('th', { scope: 'col' }, h)))),
        table), more);
    }
    listing.removeAttribute('aria-busy');
  });
  more.addEventListener('click', () => void loadPage(more));
  void loadPage(listing);
  return el('main', {}, pageHeading('Streams'), alert, el('h2', {}, 'Your streams'), listing);
}

export function streamPage(name: string): HTMLElement {
  const alert = alertRegion();
  const summary = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading…'));

  // Messages by sequence: a page from a chosen sequence, then the next pages.
  const messagesBody = el('tbody');
  const messagesStatus = el('p', { 'aria-live': 'polite', class: 'hint' });
  const next = el('button', { type: 'button', class: 'secondary', hidden: true }, 'Next messages');
  const from = textInput('', { inputmode: 'numeric', pattern: '[0-9]*' });
  const go = el('button', { type: 'submit' }, 'Show');
  let afterSeq = 0;

  const loadMessages = (control: HTMLElement) => withProgress(control, alert, async () => {
    const page = await api<{ messages: Message[]; next_after_seq: number; last_seq: number; first_seq: number }>(
      'GET', `${streamPath(name)}/messages?after_seq=${afterSeq}&limit=${MESSAGES_PER_PAGE}`);
    messagesBody.replaceChildren(...page.messages.map((m) => {
      const data = JSON.stringify(m.data);
      return el('tr', {},
        el('td', {}, String(m.seq)),
        el('td', {}, new Date(m.ts).toLocaleString()),
        el('td', {}, m.msg_id ?? ''),
        el('td', { class: 'data' }, data.length > DATA_PREVIEW_CHARS ? `${data.slice(0, DATA_PREVIEW_CHARS)}…` : data));
    }));
    const shown = page.messages;
    messagesStatus.textContent = shown.length === 0
      ? (page.last_seq < page.first_seq ? 'This stream holds no messages.' : `No messages after sequence ${afterSeq}.`)
      : `Sequences ${shown[0]!.seq} to ${shown.at(-1)!.seq} of ${page.first_seq} to ${page.last_seq}.`;
    afterSeq = page.next_after_seq;
    next.hidden = afterSeq >= page.last_seq;
  });
  next.addEventListener('click', () => void loadMessages(next));
  const fromForm = el('form', { 'aria-label': 'Messages from a sequence' },
    field('messages-from', 'From sequence', from, 'Empty starts at the first message the stream holds.'),
    el('div', { class: 'actions' }, go));
  fromForm.addEventListener('submit', (event) => {
    event.preventDefault();
    afterSeq = Math.max(0, Number(from.value || '1') - 1);
    void loadMessages(go);
  });

  const consumers = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading consumers…'));
  const loadConsumers = () => withProgress(consumers, alert, async () => {
    const page = await api<{ consumers: Consumer[] }>('GET', `${streamPath(name)}/consumers?limit=100`);
    consumers.removeAttribute('aria-busy');
    if (page.consumers.length === 0) {
      consumers.replaceChildren(el('p', {}, 'No consumers. Create one with PUT /storage/streams/{stream}/consumers/{name}.'));
      return;
    }
    consumers.replaceChildren(el('table', {}, el('caption', { class: 'hint' }, 'Consumers and their lag'),
      el('thead', {}, el('tr', {}, ...['Name', 'Deliver policy', 'Not yet delivered', 'Awaiting acknowledgement', 'Acknowledged up to', 'Redelivered']
        .map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, ...page.consumers.map((c) => el('tr', {},
        el('th', { scope: 'row' }, c.name), el('td', {}, c.deliver_policy), el('td', {}, count(c.num_pending)),
        el('td', {}, count(c.num_ack_pending)), el('td', {}, String(c.ack_floor)), el('td', {}, count(c.num_redelivered)))))));
  });

  void withProgress(summary, alert, async () => {
    const stream = await api<Stream>('GET', streamPath(name));
    summary.removeAttribute('aria-busy');
    const facts: [string, string][] = [
      ['Messages', count(stream.messages)], ['Bytes', count(stream.bytes)],
      ['Sequences', stream.messages > 0 ? `${stream.first_seq} to ${stream.last_seq}` : 'None'],
      ['Last publish', stream.last_ts ? new Date(stream.last_ts).toLocaleString() : 'Never'], ['Consumers', count(stream.consumers)],
    ];
    summary.replaceChildren(
      ...(stream.description ? [el('p', {}, stream.description)] : []),
      el('dl', {}, ...facts.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)])),
      await publishActivity(stream));
    afterSeq = stream.first_seq - 1;
    await loadMessages(messagesBody);
  });
  void loadConsumers();

  return el('main', {},
    el('p', {}, el('a', { href: '#/streams' }, 'All streams')),
    pageHeading(`Stream ${name}`), alert, summary,
    el('section', { 'aria-labelledby': 'messages-title' }, el('h2', { id: 'messages-title' }, 'Messages'), fromForm, messagesStatus,
      el('table', {}, el('caption', { class: 'hint' }, 'Messages by sequence'),
        el('thead', {}, el('tr', {}, ...['Sequence', 'Published', 'Message id', 'Data'].map((h) => el('th', { scope: 'col' }, h)))),
        messagesBody), next),
    el('section', { 'aria-labelledby': 'consumers-title' }, el('h2', { id: 'consumers-title' }, 'Consumers'), consumers));
}
