import { Transport, type ClientOptions } from './http.js';
import { AccountsView } from './views/accounts.js';
import { ApiKeysView } from './views/api-keys.js';
import { DeliveriesView } from './views/deliveries.js';
import { KvView } from './views/kv.js';
import { ObjectsView } from './views/objects.js';
import { StreamsView } from './views/streams.js';
import { TriggersView } from './views/triggers.js';

/** The API as one object, a view per kind of thing. */
export interface FlowgateClient {
  readonly kv: KvView;
  readonly objects: ObjectsView;
  readonly streams: StreamsView;
  /** The account's second factors (MFA). */
  readonly accounts: AccountsView;
  readonly triggers: TriggersView;
  readonly deliveries: DeliveriesView;
  readonly apiKeys: ApiKeysView;
  /** Every operation by its `operationId`, for what the views do not wrap. */
  readonly http: Transport;
}

/**
 * A client of the API at `baseUrl`, acting with a user's `token` or an `apiKey`.
 *
 * ```ts
 * const flowgate = createClient({ baseUrl, token });
 * await flowgate.kv.put('settings', 'theme', 'dark');
 * for await (const key of flowgate.kv.keys('settings')) console.log(key);
 * ```
 */
export function createClient(options: ClientOptions): FlowgateClient {
  const http = new Transport(options);
  return {
    kv: new KvView(http),
    objects: new ObjectsView(http),
    streams: new StreamsView(http),
    accounts: new AccountsView(http),
    triggers: new TriggersView(http),
    deliveries: new DeliveriesView(http),
    apiKeys: new ApiKeysView(http),
    http,
  };
}
