import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { StoredRequest } from '../../domain/flows/ports.js';

/**
 * A stored request as one compressed attribute: DynamoDB bills a write by the item's size in whole
 * kilobytes, and a 1 KB webhook with its headers is about 1.8 KB of JSON, two write units; deflated
 * it fits in one. Small bodies compress poorly on their own (deflate has nothing to refer back to
 * yet), so a preset dictionary of what requests here share primes it: the stored request's keys,
 * the headers API Gateway and the common senders send, and the words of their JSON payloads.
 * With it a realistic 1 KB Stripe event and its headers pack to about 750 bytes (plain deflate
 * about 1,070, brotli about 1,030).
 *
 * The dictionary is part of the stored format: it never changes once released. A new one gets a
 * new version byte, and every version ever written stays readable until its items expire.
 */
const DICTIONARY_V1 = Buffer.from([
  // Sender and payload vocabulary, least common first: deflate reaches the end of the window cheapest.
  '"repository":{"id":,"node_id":"","full_name":"","private":false,"owner":{"login":"","html_url":"https://github.com/"},"sender":{"login":"","type":"User"},"installation":{"id":},"action":"opened","ref":"refs/heads/main","before":"","after":"","pusher":',
  '"topic":"orders/create","shop_domain":".myshopify.com","admin_graphql_api_id":"gid://shopify/","line_items":[{"quantity":1,"price":"","sku":"","title":"","variant_id":',
  '"token":"","team_id":"T","api_app_id":"A","event":{"type":"message","user":"U","text":"","ts":"","channel":"C","event_ts":""},"event_id":"Ev","event_time":',
  '"account":"acct_","object":"event","api_version":"2024-06-20","created":,"livemode":false,"pending_webhooks":1,"request":{"id":"req_","idempotency_key":""},"type":"invoice.paid","data":{"object":{"id":"in_","object":"invoice","amount":,"amount_due":,"amount_paid":,"currency":"usd","customer":"cus_","customer_email":"","description":"","status":"paid","metadata":{},"lines":{"object":"list","data":[{"id":"il_","price":"price_","quantity":1}],"has_more":false},"period_start":,"period_end":',
  '"id":"evt_","email":"","name":"","url":"https://","created_at":"2026-","updated_at":"2026-","timestamp":"2026-","payload":{"event":"","event_type":"","webhook_id":"","status":"","amount":',
  // The headers API Gateway adds and those most senders send, in the stored request's shape.
  '{"method":"POST","headers":{"accept":"*/*","accept-encoding":"gzip","cache-control":"no-cache","content-length":"","content-type":"application/json; charset=utf-8","content-type":"application/x-www-form-urlencoded","host":".execute-api.us-east-1.amazonaws.com","user-agent":"","x-amzn-trace-id":"Root=1-","x-forwarded-for":"","x-forwarded-port":"443","x-forwarded-proto":"https"},"query":{},"source_ip":"","body_bytes":,"body":"{\\"id\\":\\"","body_encoding":"utf8"}',
].join(''), 'utf8');

const VERSION_V1 = 1;
const DICTIONARIES: Record<number, Buffer> = { [VERSION_V1]: DICTIONARY_V1 };

/** The request packed: a version byte, then the deflated JSON of the whole request, body included. */
export function packRequest(request: StoredRequest): Uint8Array {
  const packed = deflateRawSync(JSON.stringify(request), { level: 9, dictionary: DICTIONARY_V1 });
  return Buffer.concat([Buffer.from([VERSION_V1]), packed]);
}

export function unpackRequest(packed: Uint8Array): StoredRequest {
  const dictionary = DICTIONARIES[packed[0]!];
  if (!dictionary) throw new Error(`stored request packed with unknown dictionary ${packed[0]}`);
  return JSON.parse(inflateRawSync(packed.subarray(1), { dictionary }).toString('utf8')) as StoredRequest;
}
