import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, QUEUES, type FunctionName, type QueueName } from '../../functions/manifest.js';
import { METRIC, METRICS_NAMESPACE } from '../../functions/shared/metric-names.js';
import { buildServiceApp } from '../../lib/app.js';
import { ALARM_THRESHOLDS } from '../../lib/constructs/alarms.js';
import { listFlowNames } from '../../lib/flow-files.js';
import type { ServiceStack } from '../../lib/service-stack.js';
import { testApp } from '../support/synth.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FLOW_NAMES = listFlowNames(resolve(ROOT, 'flows'));

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string };

function synth(context: Record<string, unknown> = {}) {
  const app = testApp(context);
  const stack = buildServiceApp(app, { env: { account: '123456789012', region: 'eu-west-1' } });
  return { app, stack, template: Template.fromStack(stack) };
}

const idOf = (stack: ServiceStack, construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const resources = (template: Template, type: string) => Object.entries(template.findResources(type)) as [string, Resource][];
const alarmsOf = (template: Template) => resources(template, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
/** Alarms whose metric (or one metric of whose expression) points at the given logical id. */
const alarmsOn = (template: Template, logicalId: string) => alarmsOf(template).filter((alarm) => JSON.stringify(alarm).includes(`"${logicalId}"`));

describe('alarms, topic and dashboard', () => {
  let s: ReturnType<typeof synth>;
  beforeAll(() => {
    s = synth({ alarmEmail: 'ops@example.com' });
  });

  it('an alarm on each dead-letter queue fires at one message', () => {
    for (const name of Object.keys(QUEUES) as QueueName[]) {
      const found = alarmsOn(s.template, idOf(s.stack, s.stack.queues.deadLetterQueues[name]));
      expect(found, name).toHaveLength(1);
      expect(found[0]).toMatchObject({
        MetricName: 'ApproximateNumberOfMessagesVisible', Namespace: 'AWS/SQS', Statistic: 'Maximum',
        Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching',
      });
    }
  });

  it('each function has an errors alarm and a throttles alarm', () => {
    for (const name of Object.keys(FUNCTIONS) as FunctionName[]) {
      // Its single-metric alarms: the receiver's function URL 5xx rate is a rate over two of its metrics (webhook-function-url.test.ts).
      const found = alarmsOn(s.template, idOf(s.stack, s.stack.functions[name].function)).filter((alarm) => alarm.MetricName !== undefined);
      expect(found.map((a) => a.MetricName).sort(), name).toEqual(['Errors', 'Throttles']);
      for (const alarm of found) expect(alarm).toMatchObject({ Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 1 });
    }
  });

  it('each flow has a failures alarm over its failed + timed-out runs, batched or not (the service\'s own counts by flow)', () => {
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm')).map((a: any) => a.Properties);
    for (const flow of FLOW_NAMES) {
      const found = alarms.filter((a: any) => (a.Metrics ?? []).some((m: any) => m.MetricStat?.Metric.Dimensions?.some((d: any) => d.Name === 'flow' && d.Value === flow)));
      expect(found, flow).toHaveLength(1);
      const metrics = found[0]!.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric);
      expect(metrics.map((m: any) => m.MetricName).sort()).toEqual(['FlowRunsFailed', 'FlowRunsTimedOut']);
      for (const metric of metrics) expect(metric.Namespace).toBe('Flowgate');
      expect(found[0]!.Threshold).toBe(ALARM_THRESHOLDS.flowFailures);
    }
  });

  it("the HTTP API's 5xx rate, from 20 requests on, over 5%", () => {
    const found = alarmsOn(s.template, idOf(s.stack, s.stack.http.api));
    expect(found).toHaveLength(1);
    const expression = found[0]!.Metrics.find((m: any) => m.Expression).Expression;
    expect(expression).toBe('IF(requests >= 20, 100 * errors / requests, 0)');
    expect(found[0]!.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric.MetricName).sort()).toEqual(['5xx', 'Count']);
    expect(found[0]!.Threshold).toBe(5);
  });

  it("the flow queue's oldest message age, at 10 minutes", () => {
    const found = alarmsOn(s.template, idOf(s.stack, s.stack.queues.queues.flowEvents))
      .filter((alarm) => alarm.MetricName === 'ApproximateAgeOfOldestMessage');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ Statistic: 'Maximum', Threshold: 600 });
  });

  it('every alarm notifies the topic, on alarm and on recovery', () => {
    const topicId = idOf(s.stack, s.stack.alarms.topic);
    const alarms = alarmsOf(s.template);
    // One per DLQ, two per function (the flows' own functions too), one per flow, the API 5xx rate, the flow queue age and the webhook function URL's 5xx rate.
    const functionCount = Object.keys(FUNCTIONS).length + Object.keys(s.stack.flowFunctions.functions).length;
    const expected = Object.keys(QUEUES).length + 2 * functionCount + FLOW_NAMES.length + 3;
    expect(alarms).toHaveLength(expected);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions).toEqual([{ Ref: topicId }]);
      expect(alarm.AlarmDescription.length).toBeGreaterThan(30);
    }
  });

  it('the topic is encrypted with its own key, which CloudWatch may use only for this account\'s alarms', () => {
    const [[, topic]] = resources(s.template, 'AWS::SNS::Topic') as [[string, Resource]];
    const keyId = idOf(s.stack, s.stack.alarms.key);
    expect(topic.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    const key = s.template.toJSON().Resources[keyId] as Resource;
    expect(key.Properties.EnableKeyRotation).toBe(true);
    const statement = key.Properties.KeyPolicy.Statement.find((st: any) => st.Sid === 'CloudWatchAlarmsPublish');
    expect(statement).toMatchObject({
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Condition: { StringEquals: { 'aws:SourceAccount': '123456789012' }, ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:*' } },
    });
    // Publishing needs TLS.
    const [[, topicPolicy]] = resources(s.template, 'AWS::SNS::TopicPolicy') as [[string, Resource]];
    expect(JSON.stringify(topicPolicy.Properties.PolicyDocument)).toContain('aws:SecureTransport');
  });

  it('every topic an alarm notifies lets CloudWatch publish to it, for this account\'s alarms only', () => {
    const targets = new Set(alarmsOf(s.template).flatMap((alarm) => [...alarm.AlarmActions, ...alarm.OKActions]).map((action) => JSON.stringify(action)));
    expect(targets.size).toBeGreaterThan(0);
    const policies = resources(s.template, 'AWS::SNS::TopicPolicy').map(([, policy]) => policy.Properties);
    for (const target of targets) {
      const statements = policies.filter((policy) => policy.Topics.some((topic: unknown) => JSON.stringify(topic) === target)).flatMap((policy) => policy.PolicyDocument.Statement);
      const allows = statements.filter((st: any) => st.Effect === 'Allow' && st.Principal?.Service === 'cloudwatch.amazonaws.com' && [st.Action].flat().includes('sns:Publish'));
      expect(allows, `a statement letting CloudWatch publish to ${target}`).toHaveLength(1);
      expect(allows[0]).toMatchObject({
        Resource: JSON.parse(target),
        Condition: { StringEquals: { 'aws:SourceAccount': '123456789012' }, ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:*' } },
      });
      // The only deny is for requests without TLS, which CloudWatch never makes.
      for (const deny of statements.filter((st: any) => st.Effect === 'Deny')) expect(deny.Condition).toEqual({ Bool: { 'aws:SecureTransport': 'false' } });
    }
  });

  it('every function the stack deploys, flow functions included, has an errors alarm and a throttles alarm', () => {
    const functionIds = resources(s.template, 'AWS::Lambda::Function').map(([id]) => id);
    expect(functionIds.length).toBe(Object.keys(FUNCTIONS).length + Object.keys(s.stack.flowFunctions.functions).length);
    for (const id of functionIds) {
      expect(alarmsOn(s.template, id).filter((alarm) => alarm.MetricName !== undefined).map((alarm) => alarm.MetricName).sort(), id).toEqual(['Errors', 'Throttles']);
    }
  });

  it('context alarmEmail subscribes the address', () => {
    s.template.resourceCountIs('AWS::SNS::Subscription', 1);
    s.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: idOf(s.stack, s.stack.alarms.topic) } });
  });

  it('without alarmEmail there is no subscription; a malformed one fails the synth', () => {
    expect(Object.keys(synth().template.findResources('AWS::SNS::Subscription'))).toHaveLength(0);
    expect(() => synth({ alarmEmail: 'ops@example.com,other@example.com' })).toThrow(/context alarmEmail must be one email address/);
  });

  it('a dashboard graphs the service metrics', () => {
    const [[, dashboard]] = resources(s.template, 'AWS::CloudWatch::Dashboard') as [[string, Resource]];
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    expect(body).toContain(METRICS_NAMESPACE);
    for (const name of Object.values(METRIC)) expect(body, name).toContain(name);
  });

  it('metric lines need no permission: no function may cloudwatch:PutMetricData', () => {
    const policies = JSON.stringify(resources(s.template, 'AWS::IAM::Policy').map(([, policy]) => policy.Properties.PolicyDocument));
    expect(policies).not.toMatch(/cloudwatch:/i);
  });

  it('passes cdk-nag with nothing new acknowledged', () => {
    expect(new AwsSolutionsChecks(undefined).validateScope(s.app).violations).toEqual([]);
  });
});
