import { describe, expect, it } from 'vitest';
import { QUEUES } from '../../functions/manifest.js';
import { synth } from '../support/synth.js';

describe('flow retries back off through the queue itself', () => {
  const { stack, template } = synth();
  const worker = stack.functions[QUEUES.flowEvents.consumer];
  const queueId = stack.getLogicalId(stack.queues.queues.flowEvents.node.defaultChild as never);

  it('the worker knows its queue\'s URL, to set when a failed message comes back', () => {
    const fn = template.toJSON().Resources[stack.getLogicalId(worker.function.node.defaultChild as never)];
    expect(fn.Properties.Environment.Variables[QUEUES.flowEvents.env]).toEqual({ Ref: queueId });
  });

  it('the worker may change the visibility of that queue\'s messages, and of no other queue', () => {
    const roleId = stack.getLogicalId(worker.role.node.defaultChild as never);
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) => policy.Properties.Roles.some((role: { Ref: string }) => role.Ref === roleId))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
    const granting = statements.filter((s) => [s.Action].flat().includes('sqs:ChangeMessageVisibility'));
    expect(granting.map((s) => s.Resource)).toEqual([{ 'Fn::GetAtt': [queueId, 'Arn'] }]);
  });
});

describe('the flow worker dead-letters an event itself after its last failed attempt', () => {
  const { stack, template } = synth();
  const worker = stack.functions[QUEUES.flowEvents.consumer];
  const dlqId = stack.getLogicalId(stack.queues.deadLetterQueues.flowEvents.node.defaultChild as never);
  const roleId = stack.getLogicalId(worker.role.node.defaultChild as never);
  const statementsOf = (role: string) => Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => policy.Properties.Roles.some((r: { Ref: string }) => r.Ref === role))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown }[]);
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;

  it('the worker knows the dead-letter queue\'s URL', () => {
    const fn = resources[stack.getLogicalId(worker.function.node.defaultChild as never)]!;
    expect(fn.Properties.Environment.Variables.FLOW_QUEUE_DLQ_URL).toEqual({ Ref: dlqId });
  });

  it('the worker may send to the flow queue\'s dead-letter queue, and nothing else there; no other function may', () => {
    const onDlq = (s: { Resource: unknown }) => JSON.stringify(s.Resource).includes(`"${dlqId}"`);
    expect(statementsOf(roleId).filter(onDlq)).toEqual([{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [dlqId, 'Arn'] } }]);
    for (const [name, fn] of Object.entries(stack.functions)) {
      if (name === QUEUES.flowEvents.consumer) continue;
      expect(statementsOf(stack.getLogicalId(fn.role.node.defaultChild as never)).filter(onDlq), name).toEqual([]);
    }
  });

  it('outputs the flow queue\'s ARN, the destination of a redrive of its dead-letter queue', () => {
    template.hasOutput('FlowEventsQueueArn', { Value: { 'Fn::GetAtt': [stack.getLogicalId(stack.queues.queues.flowEvents.node.defaultChild as never), 'Arn'] } });
  });

  it('the dead-letter queue\'s policy denies only requests without TLS, and its redrive allow policy names only which queue may dead-letter to it, so the worker\'s send is let through', () => {
    const policies = Object.values(resources).filter((r) => r.Type === 'AWS::SQS::QueuePolicy' && JSON.stringify(r.Properties.Queues).includes(`"${dlqId}"`));
    const denies = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as { Effect: string; Condition?: unknown }[]).filter((s) => s.Effect === 'Deny');
    expect(denies.map((s) => s.Condition)).toEqual(denies.map(() => ({ Bool: { 'aws:SecureTransport': 'false' } })));
    const dlq = resources[dlqId]!;
    expect(dlq.Properties.RedriveAllowPolicy).toMatchObject({ redrivePermission: 'byQueue' });
    // SQS-managed encryption: a send needs no KMS grant.
    expect(dlq.Properties.SqsManagedSseEnabled).toBe(true);
    expect(dlq.Properties.KmsMasterKeyId).toBeUndefined();
  });
});
