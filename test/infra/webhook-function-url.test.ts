/**
 * The receiver's Lambda function URL on the synthesized template, by AWS's rules for a public one:
 * `AuthType` NONE with a resource policy granting `lambda:InvokeFunctionUrl` to everyone for that
 * auth type, and, since October 2025, `lambda:InvokeFunction` with `lambda:InvokedViaFunctionUrl`
 * (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html): without the second, a new
 * function URL answers 403 to every request.
 */
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../functions/settings.js';
import { synth } from '../support/synth.js';

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;
const resourcesOf = (template: ReturnType<typeof synth>['template']) => template.toJSON().Resources as Resources;
const ofType = (resources: Resources, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const functionId = (resources: Resources, name: string) => {
  const found = ofType(resources, 'AWS::Lambda::Function').filter(([id]) => id.startsWith(`${name}Handler`));
  expect(found).toHaveLength(1);
  return found[0]![0];
};
const environmentOf = (resources: Resources, name: string) => resources[functionId(resources, name)]!.Properties.Environment?.Variables ?? {};

describe('by default', () => {
  const { template } = synth();
  const resources = resourcesOf(template);
  const webhook = functionId(resources, 'webhook');

  it('the receiver has one function URL, public, and the two grants a public URL needs; no other function has one', () => {
    const urls = ofType(resources, 'AWS::Lambda::Url');
    expect(urls).toHaveLength(1);
    expect(urls[0]![1].Properties).toEqual({ AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': [webhook, 'Arn'] } });
    const grants = ofType(resources, 'AWS::Lambda::Permission').map(([, r]) => r.Properties).filter((p) => p.Principal === '*');
    expect(grants).toEqual(expect.arrayContaining([
      { Action: 'lambda:InvokeFunctionUrl', FunctionName: { 'Fn::GetAtt': [webhook, 'Arn'] }, FunctionUrlAuthType: 'NONE', Principal: '*' },
      { Action: 'lambda:InvokeFunction', FunctionName: { 'Fn::GetAtt': [webhook, 'Arn'] }, InvokedViaFunctionUrl: true, Principal: '*' },
    ]));
    // Nothing else is open to everyone.
    expect(grants).toHaveLength(2);
  });

  it('trigger URLs are on it: the triggers function is told the URL; the receiver, which cannot be (a cycle), the pattern its requests fill in', () => {
    const urlId = ofType(resources, 'AWS::Lambda::Url')[0]![0];
    expect(environmentOf(resources, 'triggers')[SETTINGS.webhookFunctionUrl.env]).toEqual({ 'Fn::GetAtt': [urlId, 'FunctionUrl'] });
    const receiver = environmentOf(resources, 'webhook');
    expect(receiver[SETTINGS.webhookFunctionUrl.env]).toBeUndefined();
    expect(receiver[SETTINGS.webhookFunctionUrlPattern.env]).toEqual({ 'Fn::Join': ['', ['https://{apiId}.lambda-url.', { Ref: 'AWS::Region' }, '.on.aws']] });
    // The API's route stays, for URLs given out before and for deployments without the URL.
    expect(receiver[SETTINGS.webhookBaseUrl.env]).toBeDefined();
  });

  it('its answers are alarmed on as the API\'s are, and the stack names it in an output', () => {
    const alarms = ofType(resources, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties).filter((p) => JSON.stringify(p.Metrics ?? []).includes('Url5xxCount'));
    expect(alarms).toHaveLength(1);
    const metrics = alarms[0]!.Metrics as { Id: string; MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: unknown }[] } } }[];
    expect(metrics.filter((m) => m.MetricStat).map((m) => [m.MetricStat!.Metric.Namespace, m.MetricStat!.Metric.MetricName, m.MetricStat!.Metric.Dimensions]))
      .toEqual(expect.arrayContaining([
        ['AWS/Lambda', 'Url5xxCount', [{ Name: 'FunctionName', Value: { Ref: webhook } }]],
        ['AWS/Lambda', 'UrlRequestCount', [{ Name: 'FunctionName', Value: { Ref: webhook } }]],
      ]));
    expect(template.toJSON().Outputs.WebhookFunctionUrl.Value).toEqual({ 'Fn::GetAtt': [ofType(resources, 'AWS::Lambda::Url')[0]![0], 'FunctionUrl'] });
  });

  it('the receiver has no reserved concurrency unless asked: an account whose quota cannot spare it would refuse the deploy', () => {
    expect(resources[webhook]!.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });
});

describe('by context', () => {
  it('webhookFunctionUrl=false: no URL, no public grant, trigger URLs on the API', () => {
    const resources = resourcesOf(synth({ webhookFunctionUrl: 'false' }).template);
    expect(ofType(resources, 'AWS::Lambda::Url')).toEqual([]);
    expect(ofType(resources, 'AWS::Lambda::Permission').filter(([, r]) => r.Properties.Principal === '*')).toEqual([]);
    expect(environmentOf(resources, 'triggers')[SETTINGS.webhookFunctionUrl.env]).toBeUndefined();
    expect(environmentOf(resources, 'webhook')[SETTINGS.webhookFunctionUrlPattern.env]).toBeUndefined();
  });

  it('behind a custom domain, no second public door unless asked for', () => {
    const domain = 'https://hooks.example.com/webhooks';
    expect(ofType(resourcesOf(synth({ publicWebhookBaseUrl: domain }).template), 'AWS::Lambda::Url')).toEqual([]);
    expect(ofType(resourcesOf(synth({ publicWebhookBaseUrl: domain, webhookFunctionUrl: true }).template), 'AWS::Lambda::Url')).toHaveLength(1);
  });

  it('webhookReservedConcurrency caps the receiver, the bound on a flood the URL has in place of the API\'s throttle', () => {
    const resources = resourcesOf(synth({ webhookReservedConcurrency: '200' }).template);
    expect(resources[functionId(resources, 'webhook')]!.Properties.ReservedConcurrentExecutions).toBe(200);
  });

  it.each([['yes'], ['1']])('webhookFunctionUrl=%s is refused at synth', (value) => {
    expect(() => synth({ webhookFunctionUrl: value })).toThrow(/webhookFunctionUrl must be true or false/);
  });

  it.each([['0'], ['1'], ['many'], ['10001']])('webhookReservedConcurrency=%s is refused at synth', (value) => {
    expect(() => synth({ webhookReservedConcurrency: value })).toThrow(/webhookReservedConcurrency must be a whole number from 2 to 10000/);
  });
});
