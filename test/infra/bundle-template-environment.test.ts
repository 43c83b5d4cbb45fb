import { randomBytes } from 'node:crypto';
import type { CfnElement } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiGatewayEvent } from '../../bench/support/api-gateway-events.js';
import { DynamoTriggerStore } from '../../functions/adapters/aws/dynamo-trigger-store.js';
import { LocalSecretBox } from '../../functions/adapters/local-secret-box.js';
import { createTrigger } from '../../functions/domain/triggers/manage-triggers.js';
import { FUNCTIONS, type FunctionName } from '../../functions/manifest.js';
import { metricFiltersOf, metricsFromLine } from '../../functions/shared/metric-filters.js';
import { METRICS_NAMESPACE } from '../../functions/shared/metric-names.js';
import { invokeBundled, linesLambdaKeeps } from '../support/bundled-function.js';
import { cdkSynthOutput } from '../support/cdk-synth-output.js';
import { useEngines } from '../support/engines.js';
import { synth, type Synthesized } from '../support/synth.js';

/**
 * The bundles `cdk deploy` ships, run with the environment the synthesized template gives each
 * function (deploy-time values filled in from the embedded engines), under the options a review
 * found faults with: `-c corsAllowedOrigins=… -c logLevel=WARN -c alarmEmail=…`. What they write
 * is read the way Lambda reads it at the template's application log level.
 */
const CONTEXT = { corsAllowedOrigins: 'https://app.example.com', logLevel: 'WARN', alarmEmail: 'ops@example.com' };
const ORIGIN = 'https://app.example.com';
const ROLE = { AWS_ACCESS_KEY_ID: 'ASIATEMPLATEENV00001', AWS_SECRET_ACCESS_KEY: randomBytes(30).toString('base64'), AWS_SESSION_TOKEN: 'template-env-session' };

const engines = useEngines();
let bundles: Record<string, string>;
let deployed: Synthesized;

beforeAll(async () => {
  const names: FunctionName[] = ['system', 'webhook'];
  // The bundles of the run's one `cdk synth`: the code does not depend on the context below.
  const synthesized = await cdkSynthOutput();
  bundles = Object.fromEntries(names.map((name) => [name, synthesized.bundleOfFunction(name)]));
  deployed = synth(CONTEXT, { env: { account: '123456789012', region: 'eu-west-1' } });
}, 330_000);

function functionResource(fn: FunctionName) {
  const id = deployed.stack.getLogicalId(deployed.stack.functions[fn].function.node.defaultChild as CfnElement);
  return deployed.template.toJSON().Resources[id] as { Properties: { Environment?: { Variables: Record<string, unknown> }; LoggingConfig: { ApplicationLogLevel: string; LogFormat: string } } };
}

/**
 * A function's environment as deployed: the template's variables, each deploy-time value (a table
 * name, a queue URL, an ARN) from `deployTime`, and what Lambda itself sets from the function's
 * logging configuration. A deploy-time variable this test does not know fails it, rather than
 * being left out.
 */
function deployedEnvironment(fn: FunctionName, deployTime: Record<string, string>): Record<string, string> {
  const { Environment, LoggingConfig } = functionResource(fn).Properties;
  const env: Record<string, string> = {
    AWS_REGION: 'eu-west-1',
    AWS_LAMBDA_LOG_LEVEL: LoggingConfig.ApplicationLogLevel,
    AWS_LAMBDA_LOG_FORMAT: LoggingConfig.LogFormat,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  for (const [name, value] of Object.entries(Environment?.Variables ?? {})) {
    if (typeof value === 'string') env[name] = value;
    else if (name in deployTime) env[name] = deployTime[name]!;
    else throw new Error(`${fn}: ${name} is a deploy-time value this test does not fill in: ${JSON.stringify(value)}`);
  }
  return env;
}

const preflightTo = (routeKey: string, rawPath: string, pathParameters?: Record<string, string>) =>
  apiGatewayEvent({ method: 'OPTIONS', routeKey, rawPath, pathParameters, headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });

describe('CORS preflights, which API Gateway routes to a function when the API has $default and ANY routes', () => {
  it('the bundled system function answers a preflight that reaches $default with a 2xx, as browsers require', async () => {
    const env = deployedEnvironment('system', { CONSOLE_COGNITO_DOMAIN: 'https://flowgate-123456789012.auth.eu-west-1.amazoncognito.com', CONSOLE_COGNITO_CLIENT_ID: 'client', OBJECTS_TRANSFER_ORIGIN: 'https://flowgate-objects.s3.eu-west-1.amazonaws.com' });
    for (const path of ['/api-keys', '/storage/kv/orders/keys/a', '/triggers/t1']) {
      const { result } = await invokeBundled(bundles.system!, preflightTo('$default', path), env);
      expect(result.statusCode, path).toBe(204);
    }
    // An OPTIONS that is not a preflight is still a method the path does not take.
    const plain = apiGatewayEvent({ method: 'OPTIONS', routeKey: '$default', rawPath: '/api-keys', headers: {} });
    expect((await invokeBundled(bundles.system!, plain, env)).result.statusCode).toBe(405);
  });

  it('the bundled webhook function answers a preflight that reaches its ANY route with a 2xx', async () => {
    const { result } = await invokeBundled(bundles.webhook!, preflightTo('ANY /webhooks/{webhook_id}', '/webhooks/unknown0123456789', { webhook_id: 'unknown0123456789' }), webhookEnvironment());
    expect(result.statusCode).toBe(204);
  });

  it('and one that reaches it through its function URL (every path, route $default), as AWS makes the event', async () => {
    const { result } = await invokeBundled(bundles.webhook!, preflightTo('$default', '/unknown0123456789'), webhookEnvironment());
    expect(result.statusCode).toBe(204);
  });
});

function webhookEnvironment(): Record<string, string> {
  const local = engines.engines.env;
  return {
    ...deployedEnvironment('webhook', {
      TRIGGERS_TABLE: local.TRIGGERS_TABLE!,
      EXECUTIONS_TABLE: local.EXECUTIONS_TABLE!,
      FLOW_QUEUE_URL: local.FLOW_QUEUE_URL!,
      FLOW_STATE_MACHINE_ARN_PREFIX: local.FLOW_STATE_MACHINE_ARN_PREFIX!,
      // The API's own URL: the receiver needs it (a required setting) to check URL signatures against.
      WEBHOOK_BASE_URL: 'https://abc123.execute-api.eu-west-1.amazonaws.com/webhooks',
      // What the template's Fn::Join makes of the region.
      WEBHOOK_FUNCTION_URL_PATTERN: 'https://{apiId}.lambda-url.eu-west-1.on.aws',
      SECRETS_KMS_KEY_ID: 'arn:aws:kms:eu-west-1:123456789012:key/00000000-0000-0000-0000-000000000000',
      FLOW_WORKER_FUNCTION: 'arn:aws:lambda:eu-west-1:123456789012:function:flowgate-flowWorker',
    }),
    ...ROLE,
    AWS_ENDPOINT_URL_DYNAMODB: local.AWS_ENDPOINT_URL_DYNAMODB!,
    AWS_ENDPOINT_URL_SQS: local.AWS_ENDPOINT_URL_SQS!,
    AWS_ENDPOINT_URL_SFN: local.AWS_ENDPOINT_URL_SFN!,
    // No Lambda here: the direct invocation is refused, and the event goes to the flow queue, as deployed when Lambda refuses one.
    AWS_ENDPOINT_URL_LAMBDA: 'http://127.0.0.1:1',
  };
}

describe('metrics at -c logLevel=WARN', () => {
  it('every function keeps Lambda\'s application log level at INFO, and its own logger at WARN', () => {
    for (const fn of Object.keys(FUNCTIONS) as FunctionName[]) {
      const { Environment, LoggingConfig } = functionResource(fn).Properties;
      expect(LoggingConfig.ApplicationLogLevel, fn).toBe('INFO');
      expect(Environment?.Variables.POWERTOOLS_LOG_LEVEL, fn).toBe('WARN');
    }
  });

  it('the metric lines of an accepted delivery survive Lambda\'s level filter and make the Flowgate metrics through the receiver\'s filters, so the metrics are not blank', async () => {
    const store = new DynamoTriggerStore(engines.dynamo, engines.engines.env.TRIGGERS_TABLE!, Date.now);
    const deps = { store, secretBox: new LocalSecretBox(randomBytes(32).toString('base64')), randomBytes, now: Date.now };
    const { record } = await createTrigger(deps, 'template-env-account', { flow: 'echo', response_mode: 'acknowledge', event_filter: [], api_key_enabled: false, signature: null, allowed_source_ips: null, enabled: true, deduplicate: false, acknowledge_response: null });
    const event = apiGatewayEvent({
      method: 'POST',
      routeKey: 'ANY /webhooks/{webhook_id}',
      rawPath: `/webhooks/${record.webhook_id}`,
      pathParameters: { webhook_id: record.webhook_id },
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'order.paid', id: 'evt_template_env' }),
    });
    const env = webhookEnvironment();
    const { result, lines, logs } = await invokeBundled(bundles.webhook!, event, env);
    expect(result.statusCode, logs).toBe(200);
    const kept = linesLambdaKeeps(lines, env.AWS_LAMBDA_LOG_LEVEL!);
    // What the bundle wrote on stdout, each line a log event, read by the filters on the receiver's log group.
    const metrics = kept.flatMap((line) => metricsFromLine(metricFiltersOf('webhook'), line));
    expect(metrics.map((m) => m.name).sort(), `metric lines kept at ${env.AWS_LAMBDA_LOG_LEVEL}: ${lines.join('\n')}`).toEqual(['WebhooksAccepted', 'WebhooksReceived']);
    for (const metric of metrics) expect(metric).toMatchObject({ namespace: METRICS_NAMESPACE, dimensions: { service: 'flowgate' }, value: 1 });
  });
});
