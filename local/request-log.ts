/**
 * What `npm start` prints for each request the gateway answers: one short line (method, path,
 * status, milliseconds) in place of the functions' metric lines, which are for CloudWatch
 * (`FLOWGATE_METRICS=stdout` prints those too).
 */
export interface RequestLogEntry {
  method: string;
  /** The path as requested, without its query: a query may carry a key or a token. */
  path: string;
  /** Undefined when the connection closed before an answer was sent. */
  status: number | undefined;
  ms: number;
}

/** A path longer than this is cut: one request is one line of the terminal. */
const MAX_PATH_CHARACTERS = 200;

/**
 * Anything but printable ASCII is written as `%XX` (the path is as the client sent it: an escape
 * sequence in it must not reach the terminal as one).
 */
const printable = (text: string): string => text.replace(/[^\x21-\x7e]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

/** `GET /health 200 3 ms`; `-` for a request that got no answer. */
export function formatRequestLine(entry: RequestLogEntry): string {
  const path = entry.path.length > MAX_PATH_CHARACTERS ? `${entry.path.slice(0, MAX_PATH_CHARACTERS)}…` : entry.path;
  return `${printable(entry.method)} ${printable(path)} ${entry.status ?? '-'} ${Math.round(entry.ms)} ms`;
}

/** The path of a request target, without its query (and fragment, which clients do not send). */
export const pathOf = (url: string | undefined): string => (url ?? '/').split(/[?#]/, 1)[0] || '/';
