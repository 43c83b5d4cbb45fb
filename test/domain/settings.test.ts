import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_WAIT_TIMEOUT_MS } from '../../functions/domain/webhooks/wait-budget.js';
import { FUNCTIONS, QUEUES, TABLES, type FunctionName } from '../../functions/manifest.js';
import { readSettings, SETTINGS, settingsReadBy, SettingsError } from '../../functions/settings.js';

/** Everything the webhook function needs to start, as the stacks wire it. */
const WEBHOOK_ENV = {
  TRIGGERS_TABLE: 'triggers', EXECUTIONS_TABLE: 'executions', FLOW_QUEUE_URL: 'https://sqs/flow',
  FLOW_STATE_MACHINE_ARN_PREFIX: 'arn:aws:states:us-east-1:1:stateMachine:flow-', WEBHOOK_BASE_URL: 'https://api/webhooks', FLOW_NAMES: 'echo',
};

describe('readSettings', () => {
  it('applies the table\'s defaults to settings left unset', () => {
    const settings = readSettings('webhook', WEBHOOK_ENV);
    expect(settings.waitTimeoutMs).toBe(25_000);
    expect(settings.triggerCacheTtlMs).toBe(5_000);
    expect(settings.logLevel).toBe('INFO');
    expect(settings.triggersTable).toBe('triggers');
  });

  it('refuses a missing wiring value at init, naming the variable', () => {
    const { TRIGGERS_TABLE: _, ...env } = WEBHOOK_ENV;
    expect(() => readSettings('webhook', env)).toThrow(new SettingsError('TRIGGERS_TABLE', 'is required'));
  });

  it.each([
    ['WAIT_TIMEOUT_MS', String(MAX_WAIT_TIMEOUT_MS + 1)],
    ['WAIT_TIMEOUT_MS', '2.5'],
    ['TRIGGER_CACHE_TTL_MS', '-1'],
    ['POWERTOOLS_LOG_LEVEL', 'LOUD'],
  ])('refuses %s=%s, naming the variable', (variable, value) => {
    expect(() => readSettings('webhook', { ...WEBHOOK_ENV, [variable]: value })).toThrow(new RegExp(`^setting ${variable} must be`));
  });

  it('a function cannot read a setting the table does not give it', () => {
    const settings = readSettings('webhook', WEBHOOK_ENV);
    expect(() => settings.totpIssuer).toThrow(/setting TOTP_ISSUER is not given to the webhook function/);
  });
});

describe('the settings table follows the manifest', () => {
  const functions = Object.keys(FUNCTIONS) as FunctionName[];

  it.each(functions)('%s receives the name of exactly the tables it may touch', (fn) => {
    const tableVariables = new Set<string>(Object.values(TABLES).map((t) => t.env));
    const received = settingsReadBy(fn).map((name) => SETTINGS[name].env).filter((env) => tableVariables.has(env));
    expect(received.sort()).toEqual(Object.keys(FUNCTIONS[fn].tables).map((t) => (TABLES as Record<string, { env: string }>)[t]!.env).sort());
  });

  it('each queue\'s URL goes to its senders and its consumer', () => {
    for (const [name, queue] of Object.entries(QUEUES)) {
      const readers = functions.filter((fn) => settingsReadBy(fn).some((s) => SETTINGS[s].env === queue.env));
      const expected = functions.filter((fn) => (FUNCTIONS[fn].sendsTo as readonly string[]).includes(name) || queue.consumer === fn);
      expect(readers).toEqual(expected);
    }
  });

  it('no two settings share a variable', () => {
    const variables = Object.values(SETTINGS).map((s) => s.env);
    expect(new Set(variables).size).toBe(variables.length);
  });
});

describe('one reader of the environment', () => {
  it('no module of functions/ reads process.env but the Lambda entries\' one reader (and LanceDB\'s native variables\' one writer), so every setting comes through the table', () => {
    const root = resolve(import.meta.dirname, '../../functions');
    const readers = readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .filter((file) => /process\.env\b/.test(readFileSync(join(root, file), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '')));
    // LANCE_CPU_THREADS (lancedb#3568) is read by the engine's native code from the process environment, so it is written there, before the module loads.
    expect(readers.sort()).toEqual([join('adapters', 'lance', 'engine-environment.ts'), join('entries', 'lambda-environment.ts')]);
  });
});
