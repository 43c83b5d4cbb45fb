import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startLocalStack } from '../local/stack.js';

/**
 * `npm run bench listen`: deliveries forwarded per second through `flowgate listen` (the bundled
 * CLI as a child process, the local stack's listen endpoint) and the latency it adds from the
 * moment a sender posts to the moment the local server receives it, beside a direct POST from the
 * same sender to the same local server in the same run (the baseline).
 *
 * Latency: one delivery at a time, alternating forwarded and direct, so both see the same machine.
 * Throughput: a burst of deliveries posted 8 at a time; the figure is forwarded deliveries per
 * second from the first post to the last arrival at the local server.
 */
const ROUNDS = 60;
const BURST = 400;
const CONCURRENCY = 8;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

export default async function listenBench() {
  const stack = await startLocalStack({ port: 0, engineThread: true, flowWorkerThread: true });
  const arrived = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const local = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
      arrived.set(id, performance.now());
      waiting.get(id)?.();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((done) => local.listen(0, '127.0.0.1', done));
  const localUrl = `http://127.0.0.1:${(local.address() as { port: number }).port}/hooks`;
  const arrival = (id: string) => new Promise<void>((done) => (arrived.has(id) ? done() : waiting.set(id, done)));

  const token = await stack.token('bench-listen');
  const created = await fetch(`${stack.baseUrl}/triggers`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ flow: 'echo' }) });
  const trigger = (await created.json() as { data: { id: string; url: string } }).data;

  const bin = join(mkdtempSync(join(tmpdir(), 'flowgate-bench-')), 'flowgate.mjs');
  execFileSync(process.execPath, [resolve(import.meta.dirname, '../cli/build.mjs'), bin]);
  const cli = spawn(process.execPath, [bin, 'listen', '--forward-to', localUrl, '--trigger', trigger.id, '--json'], {
    env: { ...process.env, FLOWGATE_BASE_URL: stack.baseUrl, FLOWGATE_TOKEN: token, FLOWGATE_LISTEN_URL: stack.listenUrl, FLOWGATE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'flowgate-bench-cfg-')), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: cli.stdout! }).on('line', () => undefined);
  await new Promise<void>((done) => cli.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('Ready') && done()));

  const post = (url: string, id: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, type: 'bench.event', data: { n: 1 } }) }).then((r) => r.arrayBuffer());
  const forwardedMs: number[] = [];
  const directMs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    for (const [kind, url, into] of [['f', trigger.url, forwardedMs], ['d', localUrl, directMs]] as const) {
      const id = `${kind}-${i}`;
      const started = performance.now();
      await post(url, id);
      await arrival(id);
      into.push(arrived.get(id)! - started);
    }
  }

  const burstStarted = performance.now();
  const ids = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
  const queue = [...ids];
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) await post(trigger.url, id);
  }));
  await Promise.all(ids.map(arrival));
  const burstSeconds = (performance.now() - burstStarted) / 1000;
  const directStarted = performance.now();
  const directIds = Array.from({ length: BURST }, (_, i) => `direct-burst-${i}`);
  const directQueue = [...directIds];
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let id = directQueue.shift(); id !== undefined; id = directQueue.shift()) await post(localUrl, id);
  }));
  const directSeconds = (performance.now() - directStarted) / 1000;

  cli.kill('SIGTERM');
  local.close();
  await stack.stop();

  const result = {
    forwarded_per_second: Math.round(BURST / burstSeconds),
    direct_per_second: Math.round(BURST / directSeconds),
    forwarded_ms: { p50: +percentile(forwardedMs, 50).toFixed(1), p95: +percentile(forwardedMs, 95).toFixed(1) },
    direct_ms: { p50: +percentile(directMs, 50).toFixed(1), p95: +percentile(directMs, 95).toFixed(1) },
    added_latency_ms_p50: +(percentile(forwardedMs, 50) - percentile(directMs, 50)).toFixed(1),
    rounds: ROUNDS,
    burst: BURST,
    concurrency: CONCURRENCY,
  };
  console.log(`forwarded through listen: ${result.forwarded_per_second}/s (direct POST ${result.direct_per_second}/s), ${BURST} deliveries ${CONCURRENCY} at a time`);
  console.log(`sender to local server: forwarded p50 ${result.forwarded_ms.p50} ms p95 ${result.forwarded_ms.p95} ms; direct p50 ${result.direct_ms.p50} ms p95 ${result.direct_ms.p95} ms; added p50 ${result.added_latency_ms_p50} ms`);
  return result;
}
