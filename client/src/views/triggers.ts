import type { BodyOf, DataOf, QueryOf, Transport } from '../http.js';
import { paginate, type ListOptions } from '../paging.js';
import type { SignatureService, Trigger, TriggerInput, TriggerPatch, TriggerWithKey, TriggerWithNewKey } from '../types.js';

/** Webhook triggers: a URL a sender posts to, which runs a flow. */
export class TriggersView {
  constructor(private readonly http: Transport) {}

  /** Creates a trigger (`createTrigger`); its API key is shown only in this answer. */
  create(input: TriggerInput): Promise<TriggerWithKey> {
    return this.http.data('createTrigger', { json: input });
  }

  /** Every trigger of the account (`listTriggers`). */
  list(options: ListOptions = {}): AsyncGenerator<Trigger> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listTriggers', { query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.triggers, next: data.next_cursor };
    });
  }

  /** `getTrigger`. */
  get(id: string): Promise<Trigger> {
    return this.http.data('getTrigger', { path: { id } });
  }

  /** Changes some of a trigger's settings (`updateTrigger`). */
  update(id: string, patch: TriggerPatch): Promise<Trigger> {
    return this.http.data('updateTrigger', { path: { id }, json: patch });
  }

  /** `deleteTrigger`. */
  async delete(id: string): Promise<void> {
    await this.http.call('deleteTrigger', { path: { id } });
  }

  /** A new webhook URL; the old one stops (`regenerateTriggerUrl`). */
  regenerateUrl(id: string): Promise<DataOf<'regenerateTriggerUrl'>> {
    return this.http.data('regenerateTriggerUrl', { path: { id } });
  }

  /** A new API key for the webhook URL (`regenerateTriggerApiKey`). */
  regenerateApiKey(id: string, input: BodyOf<'regenerateTriggerApiKey'> = {}): Promise<TriggerWithNewKey> {
    return this.http.data('regenerateTriggerApiKey', { path: { id }, json: input });
  }

  /** A new signing secret, the old one accepted for a while (`rotateTriggerSigningSecret`). */
  rotateSigningSecret(id: string, input: BodyOf<'rotateTriggerSigningSecret'>): Promise<Trigger> {
    return this.http.data('rotateTriggerSigningSecret', { path: { id }, json: input });
  }

  /** Waits for the sender's handshake (`awaitTriggerHandshake`). */
  awaitHandshake(id: string): Promise<Trigger> {
    return this.http.data('awaitTriggerHandshake', { path: { id } });
  }

  /** Delivery counts over time (`getTriggerStats`). */
  stats(id: string, query: QueryOf<'getTriggerStats'> = {}): Promise<DataOf<'getTriggerStats'>> {
    return this.http.data('getTriggerStats', { path: { id }, query });
  }

  /** Delivery counts of every trigger, one page (`listTriggerStats`). */
  listStats(query: QueryOf<'listTriggerStats'> = {}): Promise<DataOf<'listTriggerStats'>> {
    return this.http.data('listTriggerStats', { query });
  }

  /** The flows a trigger can run (`listFlows`). */
  async listFlows(): Promise<string[]> {
    return (await this.http.data('listFlows')).flows;
  }

  /** A flow's definition (`getFlow`). */
  getFlow(name: string): Promise<DataOf<'getFlow'>> {
    return this.http.data('getFlow', { path: { name } });
  }

  /** The senders a trigger can verify (`listSignatureServices`). */
  async listSignatureServices(): Promise<SignatureService[]> {
    return (await this.http.data('listSignatureServices')).services;
  }
}
