import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES } from '../../cli/src/fixtures/events.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { cliEnv, runCli, startCli } from '../support/cli.js';

/*
 * The CLI as a child process against one local stack: every fixture of `flowgate trigger` accepted
 * by a trigger of its sender, the stores' commands, deliveries tail and replay, --json, --help, and
 * exit codes.
 */

const stack = useLocalStack();
let token = '';
let env: NodeJS.ProcessEnv;
const work = mkdtempSync(join(tmpdir(), 'flowgate-cli-files-'));

beforeAll(async () => {
  token = await stack.token('cli-commands');
  env = cliEnv({ FLOWGATE_BASE_URL: stack.baseUrl, FLOWGATE_TOKEN: token, FLOWGATE_LISTEN_URL: stack.listenUrl });
});

/** Runs `count` tasks at most `limit` at a time (each is a child process; the machine has few cores). */
async function inBatches<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: limit }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
  }));
}

async function executions(triggerId: string, expected: number) {
  const until = Date.now() + 20_000;
  for (;;) {
    const list = await call(stack, 'GET', `/triggers/${triggerId}/executions?limit=100`, { token });
    const items = list.json.data.executions as { event_id: string; type?: string; status: string; execution_id: string }[];
    if (items.length >= expected || Date.now() > until) return items;
    await new Promise((done) => setTimeout(done, 100));
  }
}

describe('flowgate trigger', () => {
  /** A secret in each sender's own format; SendGrid's is the public half of a key pair whose private half the CLI signs with. */
  function secretFor(sender: string): { onTrigger: string; forCli: string[] } {
    if (sender === 'sendgrid') {
      const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const pem = join(work, 'sendgrid.pem');
      writeFileSync(pem, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      return { onTrigger: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), forCli: ['--secret-file', pem] };
    }
    const secret = ['resend', 'clerk', 'standard_webhooks'].includes(sender) ? `whsec_${randomBytes(24).toString('base64')}`
      : sender === 'stripe' ? `whsec_${randomBytes(16).toString('hex')}` : randomBytes(16).toString('hex');
    return { onTrigger: secret, forCli: ['--secret', secret] };
  }

  it(`lists ${FIXTURES.length} events of ${new Set(FIXTURES.map((f) => f.sender)).size} senders`, async () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(25);
    expect(new Set(FIXTURES.map((f) => f.sender)).size).toBeGreaterThanOrEqual(12);
    const listed = await runCli(['trigger', '--list', '--json'], env);
    expect(listed.code).toBe(0);
    expect(listed.json()).toHaveLength(FIXTURES.length);
  });

  it('sends every fixture signed as its sender signs: each is accepted (200) and recorded with its type and event id', async () => {
    const senders = [...new Set(FIXTURES.map((f) => f.sender))];
    const triggers = new Map<string, { id: string; cli: string[] }>();
    for (const sender of senders) {
      const secret = secretFor(sender);
      const created = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', name: `cli-${sender}`, signature: { service: sender, secret: secret.onTrigger } } });
      expect(created.status, `${sender}: ${created.text}`).toBe(201);
      triggers.set(sender, { id: created.json.data.id, cli: secret.forCli });
    }
    const sent = new Map<string, { event_id?: string; status: number }[]>();
    await inBatches(FIXTURES, 3, async (fixture) => {
      const trigger = triggers.get(fixture.sender)!;
      const run = await runCli(['trigger', fixture.sender, fixture.event, '--to', trigger.id, ...trigger.cli, '--json'], env);
      expect(run.code, `${fixture.sender} ${fixture.event}: ${run.stderr} ${run.stdout}`).toBe(0);
      const answer = run.json();
      expect(answer.status, `${fixture.sender} ${fixture.event}: ${JSON.stringify(answer.answer)}`).toBe(200);
      sent.set(fixture.sender, [...(sent.get(fixture.sender) ?? []), answer]);
    });
    for (const [sender, { id }] of triggers) {
      const own = FIXTURES.filter((f) => f.sender === sender);
      if (sender === 'sendgrid') {
        // One POST of three events: each recorded as an event of its own, with its own type.
        const items = await executions(id, 3);
        expect(items.map((e) => e.type).sort()).toEqual(['delivered', 'open', 'processed']);
        continue;
      }
      const items = await executions(id, own.length);
      expect(items.every((e) => e.status !== 'refused'), sender).toBe(true);
      const recordedTypes = items.map((e) => e.type);
      // Twilio's SMS webhook carries no event type (the URL says what it is).
      for (const fixture of own) if (sender !== 'twilio') expect(recordedTypes, sender).toContain(fixture.event);
      for (const answer of sent.get(sender)!) if (answer.event_id !== undefined) expect(items.map((e) => e.event_id), sender).toContain(String(answer.event_id));
    }
  });

  it('--data overrides a field of the body', async () => {
    const secret = `whsec_${randomBytes(16).toString('hex')}`;
    const created = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', response_mode: 'wait', signature: { service: 'stripe', secret } } });
    const run = await runCli(['trigger', 'stripe', 'payment_intent.succeeded', '--to', created.json.data.id, '--secret', secret, '--data', 'data.object.amount=777', '--data', 'data.object.currency=eur', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json().answer.received.data.object).toMatchObject({ amount: 777, currency: 'eur' });
  });
});

describe('deliveries tail and replay', () => {
  it('tail prints a delivery as it is recorded; replay runs it again; a trigger is named by its id or its name', async () => {
    const created = await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', name: 'orders-tail' } });
    const trigger = created.json.data as { id: string; url: string };
    const tail = startCli(['deliveries', 'tail', '--trigger', 'orders-tail', '--interval', '200', '--json'], env);
    try {
      await tail.waitForStderr('Following');
      const posted = await fetch(trigger.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'evt_tail_1', type: 'order.paid' }) });
      expect(posted.status).toBe(200);
      const line = JSON.parse(await tail.waitForLine((l) => l.includes('evt_tail_1')));
      expect(line).toMatchObject({ trigger_id: trigger.id, type: 'order.paid', event_id: 'evt_tail_1' });
      const replay = await runCli(['deliveries', 'replay', trigger.id, line.execution_id, '--json'], env);
      expect(replay.code, replay.stderr).toBe(0);
      expect(replay.json()).toBeTypeOf('object');
      const items = await executions(trigger.id, 2);
      expect(items.some((e) => (e as { replay_of?: string }).replay_of === line.execution_id)).toBe(true);
      const shown = await runCli(['deliveries', 'show', 'orders-tail', line.execution_id, '--json'], env);
      expect(shown.json()).toMatchObject({ execution_id: line.execution_id, request: { method: 'POST' } });
      const listed = await runCli(['deliveries', 'list', '--trigger', 'orders-tail', '--json'], env);
      expect(listed.json().length).toBeGreaterThanOrEqual(2);
    } finally {
      await tail.stop();
    }
  });

  it('a name no trigger has, or two triggers share, is refused with what to give instead', async () => {
    const unknown = await runCli(['deliveries', 'list', '--trigger', 'no-such-name'], env);
    expect(unknown).toMatchObject({ code: 1, stderr: 'error: no trigger has the id or name "no-such-name" (flowgate triggers list shows them)\n' });
    const ids = [];
    for (let i = 0; i < 2; i++) ids.push((await call(stack, 'POST', '/triggers', { token, body: { flow: 'echo', name: 'twin' } })).json.data.id as string);
    const shared = await runCli(['triggers', 'show', 'twin'], env);
    expect(shared.code).toBe(1);
    expect(shared.stderr).toContain('2 triggers are named "twin": give one\'s id (');
    for (const id of ids) expect(shared.stderr).toContain(id);
  });
});

describe('stores', () => {
  it('kv put, get, ls, delete and purge', async () => {
    expect((await call(stack, 'PUT', '/storage/kv/cli-bucket', { token, body: {} })).status).toBeLessThan(300);
    const key = 'user/a b?c#%é';
    expect((await runCli(['kv', 'put', 'cli-bucket', key, 'dark'], env)).code).toBe(0);
    expect((await runCli(['kv', 'put', 'cli-bucket', 'piped', '-'], env, 'from stdin')).code).toBe(0);
    expect((await runCli(['kv', 'get', 'cli-bucket', key], env)).stdout).toBe('dark');
    expect((await runCli(['kv', 'get', 'cli-bucket', 'piped', '--json'], env)).json()).toEqual({ bucket: 'cli-bucket', key: 'piped', value: 'from stdin' });
    expect((await runCli(['kv', 'ls', 'cli-bucket', '--json'], env)).json()).toEqual(['piped', key]);
    expect((await runCli(['kv', 'delete', 'cli-bucket', key], env)).code).toBe(0);
    const gone = await runCli(['kv', 'get', 'cli-bucket', key], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('404 not_found');
    expect(gone.stderr).not.toMatch(/\n\s+at /);
    const refused = await runCli(['kv', 'purge', 'cli-bucket'], env);
    expect(refused.code).toBe(2);
    expect((await runCli(['kv', 'purge', 'cli-bucket', '--yes'], env)).code).toBe(0);
  });

  it('objects cp of 12 MB both ways is byte-identical', async () => {
    expect((await call(stack, 'PUT', '/storage/objects/cli-store', { token, body: {} })).status).toBeLessThan(300);
    const source = join(work, 'big.bin');
    // Three 5 MB parts up, in parallel, and two 8 MB ranges down, the last of each partial: every
    // path of a multipart copy, with no more bytes than it takes.
    const content = randomBytes(12 * 1024 * 1024 + 12_345);
    writeFileSync(source, content);
    const up = await runCli(['objects', 'cp', source, 'cli-store:media/big.bin', '--json'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json()).toMatchObject({ bytes: content.length });
    const back = join(work, 'back.bin');
    const down = await runCli(['objects', 'cp', 'cli-store:media/big.bin', back, '--json'], env);
    expect(down.code, down.stderr).toBe(0);
    expect(statSync(back).size).toBe(content.length);
    expect(readFileSync(back).equals(content)).toBe(true);
    expect((await runCli(['objects', 'ls', 'cli-store', '--json'], env)).json()).toEqual([expect.objectContaining({ key: 'media/big.bin', size: content.length })]);
    expect((await runCli(['objects', 'rm', 'cli-store:media/big.bin'], env)).code).toBe(0);
    expect((await runCli(['objects', 'ls', 'cli-store', '--json'], env)).json()).toEqual([]);
  }, 120_000);

  it('streams pub, sub (acknowledging) and info', async () => {
    expect((await call(stack, 'PUT', '/storage/streams/cli-orders', { token, body: {} })).status).toBeLessThan(300);
    expect((await runCli(['streams', 'pub', 'cli-orders', '{"id":1}'], env)).code).toBe(0);
    expect((await runCli(['streams', 'pub', 'cli-orders', 'second', '--json'], env)).code).toBe(0);
    const sub = await runCli(['streams', 'sub', 'cli-orders', '--consumer', 'worker', '--count', '2', '--json'], env);
    expect(sub.code, sub.stderr).toBe(0);
    expect(sub.stdout.trim().split('\n').map((l) => JSON.parse(l).data)).toEqual([{ id: 1 }, 'second']);
    // Acknowledged as printed: nothing is left for the consumer.
    const again = await runCli(['streams', 'sub', 'cli-orders', '--consumer', 'worker', '--wait', '500', '--json'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('');
    const info = await runCli(['streams', 'info', 'cli-orders', '--json'], env);
    expect(info.json().consumers).toEqual([expect.objectContaining({ name: 'worker' })]);
  });
});

describe('conventions', () => {
  const COMMANDS = [
    [], ['login'], ['profiles'], ['token'], ['listen'], ['trigger'],
    ['deliveries'], ['deliveries', 'list'], ['deliveries', 'show'], ['deliveries', 'tail'], ['deliveries', 'replay'],
    ['triggers'], ['triggers', 'list'], ['triggers', 'create'], ['triggers', 'show'], ['triggers', 'rotate'],
    ['kv'], ['kv', 'get'], ['kv', 'put'], ['kv', 'delete'], ['kv', 'ls'], ['kv', 'purge'],
    ['objects'], ['objects', 'ls'], ['objects', 'cp'], ['objects', 'rm'], ['objects', 'purge'],
    ['streams'], ['streams', 'pub'], ['streams', 'sub'], ['streams', 'info'],
    ['mfa'], ['mfa', 'status'], ['mfa', 'events'],
  ];

  it('--help on every command shows its usage and examples, and exits 0', async () => {
    await inBatches(COMMANDS, 4, async (command) => {
      const help = await runCli([...command, '--help'], env);
      expect(help.code, command.join(' ')).toBe(0);
      expect(help.stdout, command.join(' ')).toContain('Usage: flowgate');
      expect(help.stdout, command.join(' ')).toContain('Examples:');
    });
  }, 180_000);

  it('a usage error exits 2 with a message naming the argument', async () => {
    const missing = await runCli(['kv', 'get', 'only-bucket'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'key'");
    const badOption = await runCli(['deliveries', 'list', '--trigger', 'x', '--limit', 'many'], env);
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toContain('--limit');
    const unknownEvent = await runCli(['trigger', 'stripe', 'no.such.event', '--to', 'x', '--secret', 's'], env);
    expect(unknownEvent.code).toBe(2);
    expect(unknownEvent.stderr).toContain('event: "no.such.event"');
  });

  it('--json output parses, and a failure is one line without a stack trace', async () => {
    for (const args of [['triggers', 'list', '--json'], ['kv', 'ls', '--json'], ['objects', 'ls', '--json'], ['streams', 'info', '--json'], ['mfa', 'status', '--json'], ['mfa', 'events', '--json'], ['token', '--json']]) {
      const run = await runCli(args, env);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(() => run.json(), args.join(' ')).not.toThrow();
    }
    const failed = await runCli(['triggers', 'show', 'no-such-trigger'], env);
    expect(failed.code).toBe(1);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('login keeps the profile in the config directory with mode 0600, and the environment overrides it', async () => {
    const own = cliEnv({});
    const login = await runCli(['login', '--base-url', stack.baseUrl, '--token', token, '--listen-url', stack.listenUrl], own);
    expect(login.code, login.stderr).toBe(0);
    const file = join(own.FLOWGATE_CONFIG_DIR!, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ current: 'default', profiles: { default: { base_url: stack.baseUrl, token } } });
    expect((await runCli(['triggers', 'list', '--json'], own)).code).toBe(0);
    const overridden = await runCli(['triggers', 'list'], { ...own, FLOWGATE_TOKEN: 'not-a-token' });
    expect(overridden.code).toBe(1);
    expect(overridden.stderr).toContain('401');
    const refusedLogin = await runCli(['login', '--base-url', stack.baseUrl, '--token', 'not-a-token'], cliEnv({}));
    expect(refusedLogin.code).toBe(1);
  });
});
