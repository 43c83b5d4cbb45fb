import { createHash, createHmac, createPrivateKey, randomUUID, sign as signWith } from 'node:crypto';
import { SENDERS } from '../../functions/domain/webhooks/senders/catalog.js';
import type { SenderRow } from '../../functions/domain/webhooks/senders/catalog-types.js';
import { usage } from './errors.js';

/*
 * Signs a request as its sender would, from the sender's catalog row (the rows the receiver verifies
 * with): HMAC rows (their content parts, key format, encoding and where the signature and timestamp
 * go), static tokens in a header, and SendGrid's ECDSA P-256. The typed client's `webhooks.sign`
 * reads the same rows; this stays until it covers every row here.
 */

export interface SignInput {
  method: string;
  /** The URL the request is sent to (Twilio and Square sign it). */
  url: string;
  body: Buffer;
  /** Headers the fixture set (an event id such as `svix-id`), which the content may sign. */
  headers: Record<string, string>;
  /** The signing secret as pasted on the trigger; for SendGrid, the PEM private key whose public key is on the trigger. */
  secret: string;
  nowMs: number;
}

export const senderRow = (id: string): SenderRow | undefined => SENDERS.find((row) => row.id === id);

type Hmac = Extract<SenderRow['verification'], { primitive: 'hmac' }>;

function keyOf(key: Hmac['key'], secret: string): Buffer {
  const text = key.strip_prefix && secret.startsWith(key.strip_prefix) ? secret.slice(key.strip_prefix.length) : secret;
  switch (key.format) {
    case 'base64': return Buffer.from(text, 'base64');
    case 'hex': return Buffer.from(text, 'hex');
    case 'sha1_of_text': return createHash('sha1').update(text, 'utf8').digest();
    default: return Buffer.from(text, 'utf8');
  }
}

function timestampText(format: string, nowMs: number): string {
  if (format === 'unix_milliseconds') return String(nowMs);
  if (format === 'rfc3339') return new Date(nowMs).toISOString();
  return String(Math.floor(nowMs / 1000));
}

/** Twilio's signed content: the URL, then each form parameter's name and value, sorted by name (twilio-node's `getExpectedTwilioSignature`). */
function twilioContent(url: string, body: Buffer): string {
  const params = new URLSearchParams(body.toString('utf8'));
  const names = [...new Set(params.keys())].sort();
  return url + names.map((name) => params.getAll(name).sort().map((value) => name + value).join('')).join('');
}

function signHmac(row: Hmac, input: SignInput): Record<string, string> {
  const headers: Record<string, string> = {};
  const ts = row.timestamp ? timestampText(row.timestamp.format, input.nowMs) : undefined;
  if (row.timestamp?.source.from === 'header') headers[row.timestamp.source.name] = ts!;
  const all = { ...input.headers, ...headers };
  let content: Buffer;
  if (!Array.isArray(row.content)) content = Buffer.from(twilioContent(input.url, input.body), 'utf8');
  else {
    content = Buffer.concat(row.content.map((part) => {
      switch (part.part) {
        case 'body': return input.body;
        case 'url': return Buffer.from(input.url, 'utf8');
        case 'method': return Buffer.from(input.method.toUpperCase(), 'utf8');
        case 'timestamp': return Buffer.from(ts ?? '', 'utf8');
        case 'literal': return Buffer.from(part.text, 'utf8');
        case 'header': {
          // An id the content signs and the fixture did not set (svix-id, webhook-id, …): a fresh one, as the sender makes.
          all[part.name] ??= `msg_${randomUUID().replaceAll('-', '')}`;
          headers[part.name] = all[part.name]!;
          return Buffer.from(all[part.name]!, 'utf8');
        }
        default: throw usage(`signing ${part.part} content parts is not supported here`);
      }
    }));
  }
  const signature = createHmac(row.algorithm, keyOf(row.key, input.secret)).update(content).digest(row.encoding);
  const source = row.signature;
  if (source.from !== 'header') throw usage(`signatures in ${source.from} are not supported here`);
  let value = `${source.prefix ?? ''}${signature}`;
  if (source.list) {
    const { separator, assign, key } = source.list;
    const entries = [...(row.timestamp?.source.from === 'signature_list' ? [`${row.timestamp.source.key}${assign}${ts}`] : []), `${key ?? ''}${key ? assign : ''}${signature}`];
    value = entries.join(separator);
  }
  headers[source.name] = value;
  return headers;
}

/** The headers that sign `input` as sender `id` signs (its row's own scheme). */
export function signAs(id: string, input: SignInput): Record<string, string> {
  const row = senderRow(id);
  if (!row) throw usage(`unknown sender ${id}`);
  const verification = row.verification as { primitive: string } & Record<string, any>;
  switch (verification.primitive) {
    case 'hmac': return signHmac(verification as Hmac, input);
    case 'static_token':
      if (verification.location !== 'header') throw usage(`${id}: a token in ${verification.location} is not supported here`);
      return { [verification.header]: input.secret };
    case 'ecdsa_p256': {
      const ts = String(Math.floor(input.nowMs / 1000));
      let key;
      try {
        key = createPrivateKey(input.secret);
      } catch {
        throw usage(`${id} signs with a private key: pass --secret-file with the PEM private key whose public key is on the trigger`);
      }
      const signature = signWith('sha256', Buffer.concat([Buffer.from(ts, 'utf8'), input.body]), key).toString('base64');
      return { [verification.timestampHeader]: ts, [verification.signatureHeader]: signature };
    }
    default: throw usage(`${id} signs with ${verification.primitive}, which flowgate trigger cannot produce`);
  }
}
