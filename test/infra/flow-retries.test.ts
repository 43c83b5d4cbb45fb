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
