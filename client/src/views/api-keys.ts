import type { Transport } from '../http.js';
import { paginate, type ListOptions } from '../paging.js';
import type { AdminApiKey, ApiKey, ApiKeyEvent, ApiKeyInput, NewApiKey } from '../types.js';

/** The account's API keys (for programs: sent as `X-Api-Key`, each with its scopes). */
export class ApiKeysView {
  constructor(private readonly http: Transport) {}

  /** Creates a key (`createApiKey`); its secret is shown only in this answer. */
  create(input: ApiKeyInput): Promise<NewApiKey> {
    return this.http.data('createApiKey', { json: input });
  }

  /** Every key of the account, without secrets (`listApiKeys`). */
  list(options: ListOptions = {}): AsyncGenerator<ApiKey> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listApiKeys', { query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.api_keys, next: data.next_cursor };
    });
  }

  /** `revokeApiKey`. */
  async revoke(id: string): Promise<void> {
    await this.http.call('revokeApiKey', { path: { id } });
  }

  /** Keys created, used for the first time and revoked (`listApiKeyEvents`). */
  events(options: ListOptions = {}): AsyncGenerator<ApiKeyEvent> {
    return paginate(async (cursor) => {
      const data = await this.http.data('listApiKeyEvents', { query: { limit: options.pageSize, cursor }, signal: options.signal });
      return { items: data.events, next: data.next_cursor };
    });
  }

  /** An administrator's key (`createAdminApiKey`), with a `mint_admin_key` proof. */
  createAdmin(options: { mfaToken: string }): Promise<AdminApiKey> {
    return this.http.data('createAdminApiKey', { headers: { 'x-mfa-token': options.mfaToken } });
  }
}

