import { describe, expect, it } from 'vitest';
import { FUNCTIONS, QUEUES, type FunctionName } from '../../functions/manifest.js';
import { SETTINGS } from '../../functions/settings.js';
import { MAX_DIRECT_MESSAGE_BYTES } from '../../functions/domain/flows/direct-first-queue.js';
import { DIRECT_INVOKE_MAX_EVENT_AGE_SECONDS } from '../../lib/constructs/event-queues.js';
import { synth } from '../support/synth.js';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

describe('a quiet trigger\'s direct path to the flow worker', () => {
  const { stack, template } = synth();
  const worker = stack.functions[QUEUES.flowEvents.consumer];
  const workerId = stack.getLogicalId(worker.function.node.defaultChild as never);
  const queueId = stack.getLogicalId(stack.queues.queues.flowEvents.node.defaultChild as never);
  const statementsOf = (name: FunctionName): Statement[] => {
    const roleId = stack.getLogicalId(stack.functions[name].role.node.defaultChild as never);
    return Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) => policy.Properties.Roles.some((role: { Ref: string }) => role.Ref === roleId))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
  };
  const invokes = (statement: Statement) => [statement.Action].flat().some((action) => action === 'lambda:InvokeFunction' || action === 'lambda:*' || action === '*');

  it('the receiver may invoke the flow worker, and nothing else', () => {
    const resources = statementsOf('webhook').filter(invokes).flatMap((s) => [s.Resource].flat());
    expect(resources).toEqual([{ 'Fn::GetAtt': [workerId, 'Arn'] }]);
  });

  it('no other function of the service may invoke the flow worker (threat: who may invoke it)', () => {
    for (const name of Object.keys(FUNCTIONS) as FunctionName[]) {
      if (name === 'webhook') continue;
      expect(statementsOf(name).filter(invokes), name).toEqual([]);
    }
    // No resource policy opens it to a service or another account either.
    const permissions = Object.values(template.findResources('AWS::Lambda::Permission'))
      .filter((permission) => JSON.stringify(permission.Properties.FunctionName).includes(workerId));
    expect(permissions).toEqual([]);
  });

  it('a stolen receiver credential reaches no more than it did: invoking the worker is sending it a flow message, which the receiver could already put on the flow queue', () => {
    const sends = statementsOf('webhook').filter((s) => [s.Action].flat().includes('sqs:SendMessage')).flatMap((s) => [s.Resource].flat());
    expect(sends).toContainEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
  });

  it('Lambda does not retry a direct invocation itself: a failed or expired one goes to the flow queue', () => {
    const configs = Object.values(template.findResources('AWS::Lambda::EventInvokeConfig'))
      .filter((config) => JSON.stringify(config.Properties.FunctionName).includes(workerId));
    expect(configs).toHaveLength(1);
    expect(configs[0]!.Properties).toMatchObject({
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: DIRECT_INVOKE_MAX_EVENT_AGE_SECONDS,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
  });

  it('within AWS\'s rules: an event age Lambda takes (60 s to 6 h), and a direct message whose destination record fits the flow queue\'s messages', () => {
    // https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionEventInvokeConfig.html
    expect(DIRECT_INVOKE_MAX_EVENT_AGE_SECONDS).toBeGreaterThanOrEqual(60);
    expect(DIRECT_INVOKE_MAX_EVENT_AGE_SECONDS).toBeLessThanOrEqual(21_600);
    // The record wraps the message (escaped no further: it is JSON inside JSON) with the invocation's
    // context and the error; SQS's message limit is the queue's MaximumMessageSize (256 KiB unless set).
    const queue = template.toJSON().Resources[queueId].Properties as { MaximumMessageSize?: number };
    const queueLimit = queue.MaximumMessageSize ?? 256 * 1024;
    expect(MAX_DIRECT_MESSAGE_BYTES + 64 * 1024).toBeLessThanOrEqual(queueLimit);
  });

  it('the worker may send to the flow queue (a direct attempt\'s retry, and its destination records)', () => {
    const sends = statementsOf(QUEUES.flowEvents.consumer).filter((s) => [s.Action].flat().includes('sqs:SendMessage')).flatMap((s) => [s.Resource].flat());
    expect(sends).toContainEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
  });

  it('the receiver is told the worker\'s ARN through the settings table, and no other function is', () => {
    const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: { Environment?: { Variables?: Record<string, unknown> } } }>;
    const receiverId = stack.getLogicalId(stack.functions.webhook.function.node.defaultChild as never);
    expect(resources[receiverId]!.Properties.Environment!.Variables![SETTINGS.flowWorkerFunction.env]).toEqual({ 'Fn::GetAtt': [workerId, 'Arn'] });
    const told = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.[SETTINGS.flowWorkerFunction.env] !== undefined);
    expect(told.map(([id]) => id)).toEqual([receiverId]);
    expect(SETTINGS.lambdaEndpoint.source).toEqual({ kind: 'local' });
  });
});
