import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoKvStore, generationPk, VALUE_EXPIRY_ATTRIBUTE } from '../../functions/adapters/aws/dynamo-kv-store.js';
import { KvService } from '../../functions/domain/kv/service.js';
import { buildServiceApp } from '../../lib/app.js';
import type { ServiceStack } from '../../lib/service-stack.js';
import { useEngines } from '../support/engines.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CDK_CONTEXT = JSON.parse(readFileSync(resolve(ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>;

type Resource = { Type: string; Properties: Record<string, any> };

interface Synthesized {
  stack: ServiceStack;
  template: Template;
}

/** The app as `cdk synth` builds it (cdk.json's context and cdk-nag), minus bundling. */
function synth(context: Record<string, unknown> = {}): Synthesized {
  const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = buildServiceApp(app);
  return { stack, template: Template.fromStack(stack) };
}

const idOf = (s: Synthesized, construct: IConstruct) => s.stack.getLogicalId(construct.node.defaultChild as CfnElement);
const resource = (s: Synthesized, construct: IConstruct): Resource =>
  s.template.toJSON().Resources[idOf(s, construct)] as Resource;

let s: Synthesized;
beforeAll(() => {
  s = synth();
});

describe('KV values with ttl_seconds', () => {
  const local = useEngines();

  it('are deleted by DynamoDB TTL: the kv table expires items by the attribute DynamoKvStore writes, in epoch seconds', async () => {
    expect(resource(s, s.stack.data.tables.kv).Properties.TimeToLiveSpecification).toEqual({ AttributeName: VALUE_EXPIRY_ATTRIBUTE, Enabled: true });

    // DynamoDB TTL reads epoch seconds: a value written at a pinned instant with a 60 s lifetime
    // must carry that instant's epoch second + 60 under the attribute, not milliseconds.
    const nowMs = 1_900_000_000_250;
    const store = new DynamoKvStore(local.dynamo, local.engines.env.KV_TABLE!);
    const service = new KvService({ store, sweeps: { enqueue: async () => {} }, now: () => nowMs, randomBytes, settleMs: 0 });
    const ref = { accountId: 'ttl-owner', name: 'expiring' };
    const bucket = await service.createBucket(ref, { description: null, ttlSeconds: 60, maxValueBytes: 1024 });
    await service.putValue(ref, 'k', { bytes: Buffer.from('v'), contentType: 'text/plain' });

    const { Item } = await local.dynamo.send(new GetCommand({
      TableName: local.engines.env.KV_TABLE!,
      Key: { pk: generationPk({ ...ref, generation: bucket.generation }), sk: 'k' },
    }));
    expect(Item?.[VALUE_EXPIRY_ATTRIBUTE]).toBe(1_900_000_001 + 60);
  });
});
