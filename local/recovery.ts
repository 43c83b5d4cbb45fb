import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDeliveryStats } from '../functions/adapters/aws/dynamo-delivery-stats.js';
import { DynamoExecutionStore } from '../functions/adapters/aws/dynamo-execution-store.js';
import { CountingExecutionStore } from '../functions/adapters/counting-execution-store.js';
import { DynamoTriggerStore } from '../functions/adapters/aws/dynamo-trigger-store.js';
import { SqsEventQueue } from '../functions/adapters/aws/sqs-event-queue.js';
import { SqsSweepQueue } from '../functions/adapters/aws/sqs-sweep-queue.js';
import type { Clock } from '../functions/domain/clock.js';
import type { ExecutionStatus } from '../functions/domain/flows/ports.js';
import { countAtOnce } from '../functions/domain/stats/tally.js';
import { requeueExecution } from '../functions/domain/flows/replay.js';
import type { GenerationRef } from '../functions/domain/kv/types.js';
import type { TriggerRecord } from '../functions/domain/triggers/trigger.js';
import { RECOVERY_INDEXES } from './engines.js';

/**
 * What a restart on a data directory finds unfinished, and puts back in motion.
 *
 * The local queues are in memory (local-aws-sqs keeps nothing), so a stop or crash loses every
 * message in them. Nothing acknowledged is lost with them, because every message is made from a
 * record on disk that is written before the message is sent:
 *
 * - an accepted delivery is an execution record (`queued`, or `running` once a worker or a
 *   waiting sender started it) with its request, both written before the 200; each one still
 *   unfinished is queued again from its stored request, through the replay's own message builder
 *   (`requeueExecution`);
 * - a purge or bucket delete leaves the old generation's items under `DATA#…#<generation>`, no
 *   longer the bucket's; each such generation that still holds items gets a sweep task again.
 *
 * Persisting the queue engine instead would have meant a second write on disk for every event
 * (the message, and its deletion) and a durable store written into a minified third-party engine;
 * the records are already there and are what an operator reads.
 */
export interface RecoveryDeps {
  dynamo: DynamoDBDocumentClient;
  sqs: SQSClient;
  tables: { executions: string; triggers: string; kv: string };
  queues: { flowEvents: string; kvSweep: string };
  now: Clock;
}

export interface RecoveryReport {
  /** Executions queued again. */
  requeued: number;
  /** Of those, how many had a run under way when the stack stopped. */
  interrupted: number;
  /** Executions whose request was never written when the stack stopped, so never answered 200: removed. */
  unacknowledged: number;
  /** Executions that could not run again (trigger deleted, request unreadable): recorded `failed`. */
  failed: number;
  /** Old bucket generations handed to the sweeper again. */
  sweeps: number;
}

const UNFINISHED: readonly ExecutionStatus[] = ['queued', 'running'];
/** Executions requeued at once: enough to keep the engines busy, few enough not to flood them. */
const CONCURRENCY = 8;
/**
 * The greatest sort key DynamoDB accepts (1,024 bytes of the highest code point): a scan started
 * after `(pk, this)` goes on at the next partition, whatever that partition holds.
 */
const END_OF_PARTITION = String.fromCodePoint(0x10ffff).repeat(256);

/** A status record's keys, `TRIGGER#<trigger id>#<shard>` / `EXEC#<received_at>#<execution id>` (`dynamo-execution-store.ts`), as its ref. */
const refOf = (pk: string, sk: string) => ({ triggerId: pk.slice('TRIGGER#'.length, pk.lastIndexOf('#')), executionId: sk.slice(sk.lastIndexOf('#') + 1) });

/**
 * Every unfinished execution, from the `byStatus` index: one Query per status, reading only the
 * records in it, however many finished ones the table holds. Each is then read by key, which is
 * strongly consistent (an index is not) and brings its request.
 */
async function recoverExecutions(deps: RecoveryDeps, report: RecoveryReport): Promise<void> {
  // Counted as the receiver and the worker count: an interrupted run's record moves to queued or failed.
  const executions = new CountingExecutionStore(new DynamoExecutionStore(deps.dynamo, deps.tables.executions, deps.now), countAtOnce(new DynamoDeliveryStats(deps.dynamo, deps.tables.executions, deps.now), deps.now));
  const triggerStore = new DynamoTriggerStore(deps.dynamo, deps.tables.triggers, deps.now);
  const replayDeps = { executions, queue: new SqsEventQueue(deps.sqs, deps.queues.flowEvents), now: deps.now, newId: () => randomBytes(16).toString('hex') };
  const triggers = new Map<string, Promise<TriggerRecord | undefined>>();
  /** A trigger by its id alone (its account is not in the execution's keys): one Query of `byId`. */
  const triggerOf = (id: string) => {
    if (!triggers.has(id)) {
      triggers.set(id, (async () => {
        const { Items = [] } = await deps.dynamo.send(new QueryCommand({
          TableName: deps.tables.triggers,
          IndexName: 'byId',
          KeyConditionExpression: '#id = :id AND sk = :sk',
          ExpressionAttributeNames: { '#id': RECOVERY_INDEXES.triggers.byId.partitionKey },
          ExpressionAttributeValues: { ':id': id, ':sk': `TRIGGER#${id}` },
        }));
        // The index holds keys only: the owner's item is `ACCOUNT#<account>` (`dynamo-trigger-store.ts`).
        const pk = Items[0]?.pk as string | undefined;
        const accountId = pk?.startsWith('ACCOUNT#') ? pk.slice('ACCOUNT#'.length) : undefined;
        return accountId === undefined ? undefined : triggerStore.get(accountId, id);
      })());
    }
    return triggers.get(id)!;
  };

  const refs: { triggerId: string; executionId: string; key: { pk: string; sk: string } }[] = [];
  for (const status of UNFINISHED) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await deps.dynamo.send(new QueryCommand({
        TableName: deps.tables.executions,
        IndexName: 'byStatus',
        KeyConditionExpression: '#status = :status',
        ExpressionAttributeNames: { '#status': RECOVERY_INDEXES.executions.byStatus.partitionKey },
        ExpressionAttributeValues: { ':status': status },
        ExclusiveStartKey: start,
      }));
      for (const item of page.Items ?? []) refs.push({ ...refOf(item.pk as string, item.sk as string), key: { pk: item.pk as string, sk: item.sk as string } });
      start = page.LastEvaluatedKey;
    } while (start);
  }

  const work = [...refs];
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    for (let next = work.shift(); next; next = work.shift()) {
      const { key, ...ref } = next;
      const execution = await executions.get(ref);
      // Expired, or finished after all: nothing to do.
      if (!execution || !UNFINISHED.includes(execution.status)) continue;
      // Its request was never written, so it was never acknowledged (the receiver and a replay
      // answer only once both are): forget it, as the receiver does with what it cannot queue,
      // and give back the claim it took (the record names it) for the sender's retry.
      if (execution.status === 'queued' && execution.attempts === 0 && execution.request === undefined) {
        const { Item } = await deps.dynamo.send(new GetCommand({ TableName: deps.tables.executions, Key: key, ProjectionExpression: 'claim_key' }));
        await executions.discard(ref, execution.event_id);
        const claimKey = Item?.claim_key as string | undefined;
        // Records written before they named their claim: an unsigned deduplicating trigger's key was the event id.
        if (claimKey !== undefined) await executions.releaseEvent(ref.triggerId, claimKey);
        else if ((await triggerOf(ref.triggerId))?.deduplicate) await executions.releaseEvent(ref.triggerId, execution.event_id);
        report.unacknowledged++;
        continue;
      }
      const outcome = await requeueExecution(replayDeps, await triggerOf(ref.triggerId), { ...execution, triggerId: ref.triggerId });
      if (outcome === 'requeued') {
        report.requeued++;
        if (execution.status === 'running') report.interrupted++;
      } else {
        report.failed++;
      }
    }
  }));
}

/** `DATA#<account>#<bucket>#<generation>` (`dynamo-kv-store.ts`); bucket names and generations hold no `#`. */
function generationOf(pk: string): GenerationRef | undefined {
  const parts = pk.split('#');
  if (parts[0] !== 'DATA' || parts.length < 4) return undefined;
  return { accountId: parts.slice(1, -2).join('#'), name: parts.at(-2)!, generation: parts.at(-1)! };
}

/**
 * Every bucket generation that still holds items but is no longer its bucket's (a purge or delete
 * whose sweep had not finished), found by a scan that reads one item per partition and then skips
 * to the next: its cost grows with the number of buckets and generations, not of keys.
 */
async function recoverSweeps(deps: RecoveryDeps, report: RecoveryReport): Promise<void> {
  const current = new Map<string, string>();
  const stored: GenerationRef[] = [];
  let start: Record<string, unknown> | undefined;
  for (;;) {
    const { Items = [] } = await deps.dynamo.send(new ScanCommand({
      TableName: deps.tables.kv,
      Limit: 1,
      ProjectionExpression: 'pk, generation',
      ExclusiveStartKey: start,
    }));
    const item = Items[0];
    if (!item) break;
    const pk = item.pk as string;
    if (pk.startsWith('BUCKET#')) current.set(pk.slice('BUCKET#'.length), item.generation as string);
    const generation = generationOf(pk);
    if (generation) stored.push(generation);
    start = { pk, sk: END_OF_PARTITION };
  }
  const sweeps = new SqsSweepQueue(deps.sqs, deps.queues.kvSweep);
  for (const generation of stored) {
    if (current.get(`${generation.accountId}#${generation.name}`) === generation.generation) continue;
    // Every write that could still land in it died with the last run: the first pass is the final one.
    await sweeps.enqueue({ ...generation, settleUntil: deps.now() }, 0);
    report.sweeps++;
  }
}

/** Puts back in motion what the last run on this data directory left unfinished; run before anything is served. */
export async function recover(deps: RecoveryDeps): Promise<RecoveryReport> {
  const report: RecoveryReport = { requeued: 0, interrupted: 0, unacknowledged: 0, failed: 0, sweeps: 0 };
  await Promise.all([recoverExecutions(deps, report), recoverSweeps(deps, report)]);
  return report;
}
