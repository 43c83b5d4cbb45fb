import { delimiter, resolve } from 'node:path';
import type { TriggerSettings } from '../../functions/domain/triggers/trigger-requests.js';
import type { LocalStack } from '../../local/stack.js';
import { call, readResponse } from './local-stack.js';

/** The shipped flows plus test-only ones (always-fails, slow, fails-on-type). */
export const TEST_FLOWS_DIR = [resolve(import.meta.dirname, '../../flows'), resolve(import.meta.dirname, '../fixtures/flows')].join(delimiter);

/** The settings of a trigger created with only `{ flow: 'echo' }`: every other field at its documented default. */
export const DEFAULT_TRIGGER_SETTINGS = {
  flow: 'echo',
  response_mode: 'acknowledge',
  event_filter: [],
  api_key_enabled: false,
  signature: null,
  allowed_source_ips: null,
  enabled: true,
  deduplicate: false,
  acknowledge_response: null,
} satisfies TriggerSettings;

/** Creates a trigger over the gateway and returns its public form (with `api_key` when generated). */
export async function createTrigger(stack: LocalStack, token: string, settings: Record<string, unknown>) {
  const res = await call(stack, 'POST', '/triggers', { token, body: settings });
  if (res.status !== 201) throw new Error(`create trigger failed: ${res.status} ${res.text}`);
  return res.json.data as { id: string; webhook_id: string; url: string; api_key?: string; [k: string]: unknown };
}

/** POSTs raw bytes to a webhook URL. */
export async function deliver(url: string, body: string | Uint8Array, headers: Record<string, string> = {}, method = 'POST') {
  return readResponse(await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: method === 'GET' || method === 'HEAD' ? undefined : body }));
}

/** Polls the trigger's executions until `done` holds (or fails the test after `timeoutMs`). */
export async function waitForExecutions(
  stack: LocalStack,
  token: string,
  triggerId: string,
  done: (executions: any[]) => boolean,
  timeoutMs = 20_000,
): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  let executions: any[] = [];
  while (Date.now() < deadline) {
    executions = [];
    let cursor: string | null = null;
    do {
      const res = await call(stack, 'GET', `/triggers/${triggerId}/executions?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { token });
      executions.push(...res.json.data.executions);
      cursor = res.json.data.next_cursor;
    } while (cursor);
    if (done(executions)) return executions;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`executions did not settle: ${JSON.stringify(executions.map((e) => [e.status, e.attempts]))}`);
}
