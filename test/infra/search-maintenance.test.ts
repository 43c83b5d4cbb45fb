/**
 * Search maintenance deployed: a FIFO queue (one message group per index, the debounce window as
 * its delay) with a FIFO dead-letter queue, an event source mapping that runs the maintenance
 * function on it, and that function granted its queue, the search prefix of the bucket and the
 * commit table, nothing else; the search function sends to the queue.
 */
import type { CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, MIN_RECEIVES_FOR_LAMBDA_CONSUMER, QUEUES, SEARCH_MAINTENANCE_WINDOW_SECONDS } from '../../functions/manifest.js';
import { VISIBILITY_TIMEOUT_MULTIPLE } from '../../lib/constructs/event-queues.js';
import { synth, type Synthesized } from '../support/synth.js';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };
let s: Synthesized;
let resources: Record<string, { Type: string; Properties: Record<string, any> }>;
const idOf = (construct: IConstruct) => s.stack.getLogicalId(construct.node.defaultChild as CfnElement);
const refs = (value: unknown): string[] => [...JSON.stringify(value).matchAll(/"(?:Ref|Fn::GetAtt)":\s*(?:"([^"]+)"|\["([^"]+)")/g)].map((m) => m[1] ?? m[2]!);
const asArray = <T>(value: T | T[]) => (Array.isArray(value) ? value : [value]);

function statementsOf(roleId: string): Statement[] {
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && refs(r.Properties.Roles).includes(roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[]);
}

beforeAll(() => {
  s = synth();
  resources = s.template.toJSON().Resources;
});

describe('the search maintenance queue', () => {
  it('is FIFO, without content-based deduplication (the id names the window), delaying each job by the window', () => {
    const queue = resources[idOf(s.stack.queues.queues.searchMaintenance)]!.Properties;
    expect(queue.FifoQueue).toBe(true);
    expect(queue.ContentBasedDeduplication).toBe(false);
    expect(queue.QueueName).toMatch(/-searchMaintenance\.fifo$/);
    expect(queue.DelaySeconds).toBe(SEARCH_MAINTENANCE_WINDOW_SECONDS);
    expect(queue.VisibilityTimeout).toBe(FUNCTIONS[QUEUES.searchMaintenance.consumer].timeoutSeconds * VISIBILITY_TIMEOUT_MULTIPLE);
    expect(queue.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [idOf(s.stack.queues.deadLetterQueues.searchMaintenance), 'Arn'] }, maxReceiveCount: MIN_RECEIVES_FOR_LAMBDA_CONSUMER });
  });

  it('dead-letters into a FIFO queue, as SQS requires of a FIFO queue\'s dead-letter queue', () => {
    expect(resources[idOf(s.stack.queues.deadLetterQueues.searchMaintenance)]!.Properties.FifoQueue).toBe(true);
    // The other queues stay standard.
    expect(resources[idOf(s.stack.queues.queues.flowEvents)]!.Properties.FifoQueue).toBeUndefined();
  });

  it('runs the maintenance function, one job per invocation, reporting a failed job alone', () => {
    const queueId = idOf(s.stack.queues.queues.searchMaintenance);
    const mappings = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping' && refs(r.Properties.EventSourceArn).includes(queueId));
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]!.Properties;
    expect(refs(mapping.FunctionName)).toContain(idOf(s.stack.functions.searchMaintenance.function));
    expect(mapping.BatchSize).toBe(1);
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  });
});

describe('the maintenance function\'s grants', () => {
  it('reach only its queue, the search prefix of the bucket, the commit table and its logs', () => {
    const fn = s.stack.functions.searchMaintenance;
    const grants = new Map<string, Set<string>>();
    for (const statement of statementsOf(idOf(fn.role))) {
      expect(statement.Effect).toBe('Allow');
      for (const target of new Set(refs(statement.Resource))) {
        const actions = grants.get(target) ?? new Set<string>();
        asArray(statement.Action).forEach((a) => actions.add(a));
        grants.set(target, actions);
      }
    }
    expect([...grants.keys()].sort()).toEqual([
      idOf(s.stack.queues.queues.searchMaintenance), idOf(s.stack.objectStorage.bucket), idOf(s.stack.searchStorage.commitTable), idOf(fn.logGroup),
    ].sort());
    expect([...grants.get(idOf(s.stack.queues.queues.searchMaintenance))!].sort()).toEqual(['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage']);
    expect([...grants.get(idOf(s.stack.searchStorage.commitTable))!].sort()).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query']);
    const bucketStatements = statementsOf(idOf(fn.role)).filter((st) => refs(st.Resource).includes(idOf(s.stack.objectStorage.bucket)));
    expect(bucketStatements.map((st) => JSON.stringify(st.Resource))).toEqual(expect.arrayContaining([expect.stringContaining('/search/*')]));
    for (const st of bucketStatements) {
      if (asArray(st.Action).includes('s3:ListBucket')) expect(JSON.stringify(st)).toContain('"s3:prefix"');
      else expect(JSON.stringify(st.Resource)).toContain('/search/*');
    }
  });

  it('the search function may send to the queue, and not receive from it', () => {
    const actions = statementsOf(idOf(s.stack.functions.search.role))
      .filter((st) => refs(st.Resource).includes(idOf(s.stack.queues.queues.searchMaintenance)))
      .flatMap((st) => asArray(st.Action));
    expect(actions).toContain('sqs:SendMessage');
    expect(actions).not.toContain('sqs:ReceiveMessage');
  });
});
