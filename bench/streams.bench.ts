import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { dynamoClient } from '../functions/adapters/aws/clients/dynamo.js';
import { startLocalStack } from '../local/stack.js';
import type { ChartRow } from './support/chart-row.js';
import { fixed, int } from './support/timing.js';

/**
 * `npm run bench streams`: publish and consume throughput of one stream over HTTP on the local
 * stack, beside the KV put baseline of the same run (one 1 KB value per request), and the DynamoDB
 * write units each message costs, as dynalite reports them (`ReturnConsumedCapacity: TOTAL` on
 * every write the handlers send, a middleware on their own client), with what a million 1 KB
 * messages cost in write units on demand.
 *
 * A "1 KB message" is 1,000 bytes of data (a JSON string). Rates are messages a second on this
 * machine's single-threaded engines; ratios to the KV baseline are what carries over.
 */
const KV_PUTS = 200;
const SINGLE_PUBLISHES = 200;
const BATCH = 100;
const BATCHES = 20;
const PUBLISHERS = 8;
const DATA = 'x'.repeat(998);
const prices = JSON.parse(readFileSync(resolve(import.meta.dirname, 'prices.json'), 'utf8')).prices;
const WRU_USD: number = prices.dynamodb_write_request_unit.usd;

type Kind = 'messages' | 'head' | 'consumers' | 'other';
const kindOf = (pk: string): Kind =>
  pk.startsWith('STREAMMSG#') ? 'messages' : pk.startsWith('STREAMS#') ? 'head' : pk.startsWith('STREAMCON#') ? 'consumers' : 'other';

export default async function streamsBench() {
  const stack = await startLocalStack({ port: 0 });
  const units: Record<Kind, number> = { messages: 0, head: 0, consumers: 0, other: 0 };
  const reset = () => { for (const kind of Object.keys(units) as Kind[]) units[kind] = 0; };
  dynamoClient(stack.aws).middlewareStack.add((next, context) => async (args) => {
    const command = context.commandName ?? '';
    if (!/^(Put|Update|Delete|BatchWrite)(Item)?Command$/.test(command)) return next(args);
    const input = args.input as { Item?: { pk?: string }; Key?: { pk?: string }; RequestItems?: Record<string, { PutRequest?: { Item: { pk: string } }; DeleteRequest?: { Key: { pk: string } } }[]>; ReturnConsumedCapacity?: string };
    input.ReturnConsumedCapacity = 'TOTAL';
    const result = await next(args);
    const output = result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] };
    const consumed = [output.ConsumedCapacity ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
    const firstRequest = Object.values(input.RequestItems ?? {})[0]?.[0];
    const pk = input.Item?.pk ?? input.Key?.pk ?? firstRequest?.PutRequest?.Item.pk ?? firstRequest?.DeleteRequest?.Key.pk ?? '';
    units[kindOf(pk)] += consumed;
    return result;
  }, { step: 'initialize', name: 'countWriteUnits' });

  try {
    const token = await stack.token('streams-bench');
    const send = async (method: string, path: string, body?: unknown, raw?: string) => {
      const res = await fetch(stack.baseUrl + path, {
        method, headers: { authorization: `Bearer ${token}`, 'content-type': raw === undefined ? 'application/json' : 'application/octet-stream' },
        body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    const timed = async (run: () => Promise<unknown>) => {
      const started = performance.now();
      await run();
      return (performance.now() - started) / 1000;
    };

    await send('PUT', '/storage/kv/bench', {});
    const value = 'v'.repeat(1000);
    for (let i = 0; i < 20; i++) await send('PUT', `/storage/kv/bench/keys/warm-${i}`, undefined, value);
    const kvSeconds = await timed(async () => { for (let i = 0; i < KV_PUTS; i++) await send('PUT', `/storage/kv/bench/keys/k-${i}`, undefined, value); });
    const kvPerSecond = KV_PUTS / kvSeconds;

    const messages = (n: number) => Array.from({ length: n }, () => ({ data: DATA }));
    const publishCase = async (name: string, publishers: number, perCall: number, calls: number) => {
      await send('PUT', `/storage/streams/${name}`, {});
      for (let i = 0; i < 5; i++) await send('POST', `/storage/streams/${name}/messages`, { messages: messages(1) });
      reset();
      const seconds = await timed(() => Promise.all(Array.from({ length: publishers }, async () => {
        for (let i = 0; i < calls; i++) await send('POST', `/storage/streams/${name}/messages`, { messages: messages(perCall) });
      })));
      const total = publishers * perCall * calls;
      const info = (await send('GET', `/storage/streams/${name}`)).data;
      if (info.last_seq !== total + 5) throw new Error(`${name}: last_seq ${info.last_seq}, expected ${total + 5}`);
      const wruPerMessage = (units.messages + units.head + units.other) / total;
      return { case: name, publishers, messages_per_call: perCall, messages: total, per_second: total / seconds, ratio_to_kv_put: total / seconds / kvPerSecond, write_units_per_message: wruPerMessage, head_units_per_message: units.head / total, usd_per_million: wruPerMessage * WRU_USD * 1e6 };
    };
    const rows = [
      await publishCase('single-1', 1, 1, SINGLE_PUBLISHES),
      await publishCase('batch-1', 1, BATCH, BATCHES),
      await publishCase('single-8', PUBLISHERS, 1, SINGLE_PUBLISHES / PUBLISHERS),
      await publishCase('batch-8', PUBLISHERS, BATCH, BATCHES / PUBLISHERS * 2),
    ];

    // Consume what batch-1 holds: fetch 100, ack them, until nothing is left.
    await send('PUT', '/storage/streams/batch-1/consumers/bench', { ack_wait_seconds: 300 });
    reset();
    let consumed = 0;
    const consumeSeconds = await timed(async () => {
      for (;;) {
        const batch = (await send('POST', '/storage/streams/batch-1/consumers/bench/fetch', { batch: 100 })).data.messages as { seq: number }[];
        if (batch.length === 0) break;
        await send('POST', '/storage/streams/batch-1/consumers/bench/ack', { seqs: batch.map((m) => m.seq) });
        consumed += batch.length;
      }
    });
    const consume = { messages: consumed, per_second: consumed / consumeSeconds, ratio_to_kv_put: consumed / consumeSeconds / kvPerSecond, write_units_per_message: units.consumers / consumed };

    console.log(`KV put baseline: ${int(kvPerSecond)} puts/s (1 KB values, one request each)`);
    console.log(`${'case'.padEnd(10)}${'msgs/s'.padStart(9)}${'vs KV put'.padStart(11)}${'WRU/msg'.padStart(9)}${'head WRU/msg'.padStart(14)}${'$ per 1M (writes)'.padStart(19)}`);
    for (const r of rows) {
      console.log(`${r.case.padEnd(10)}${int(r.per_second).padStart(9)}${`${fixed(r.ratio_to_kv_put, 2)}x`.padStart(11)}${fixed(r.write_units_per_message, 2).padStart(9)}${fixed(r.head_units_per_message, 2).padStart(14)}${`$${fixed(r.usd_per_million, 2)}`.padStart(19)}`);
    }
    console.log(`consume (fetch 100 + ack): ${int(consume.per_second)} msgs/s (${fixed(consume.ratio_to_kv_put, 2)}x KV put), ${fixed(consume.write_units_per_message, 2)} WRU/msg`);
    const batch = rows[1]!;
    const chart: ChartRow[] = [
      ...rows.map((r) => ({ label: r.case, group: 'stream publish, messages/s ÷ KV puts/s', value: r.ratio_to_kv_put, better: 'higher' as const, scale: 'log' as const, text: `${fixed(r.ratio_to_kv_put, 2)}x (${int(r.per_second)} vs ${int(kvPerSecond)}/s)` })),
      { label: 'batched publish', group: 'stream publish, $ per million 1 KB messages (write units)', value: batch.usd_per_million, target: 1, better: 'lower', text: `$${fixed(batch.usd_per_million, 2)} (${fixed(batch.write_units_per_message, 2)} WRU/msg)` },
    ];
    return { kv_put_per_second: kvPerSecond, publish: rows, consume, wru_usd: WRU_USD, target_met: batch.usd_per_million < 1, chart };
  } finally {
    await stack.stop();
  }
}
