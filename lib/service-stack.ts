import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Aws, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { type CfnFunction, FunctionUrlAuthType, type FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import {
  DEFAULT_ROUTE,
  FUNCTIONS,
  QUEUES,
  ROUTES,
  TABLES,
  type FunctionName,
  type FunctionSpec,
  type QueueName,
} from '../functions/manifest.js';
import { SETTINGS, settingsReadBy } from '../functions/settings.js';
import { DEPLOYED_READ_CONSISTENCY_SECONDS } from '../functions/domain/search/limits.js';
import type { ServiceConfig } from './config.js';
import { Alarms } from './constructs/alarms.js';
import { DataStores } from './constructs/data-stores.js';
import { EventQueues } from './constructs/event-queues.js';
import { FlowFunctions } from './constructs/flow-functions.js';
import { Flows } from './constructs/flows.js';
import { HttpRoutes } from './constructs/http-routes.js';
import { Identity } from './constructs/identity.js';
import { MfaSigningKey } from './constructs/mfa-signing-key.js';
import { ObjectStorage } from './constructs/object-storage.js';
import { SecretsKey } from './constructs/secrets-key.js';
import { SearchStorage } from './constructs/search-storage.js';
import { ServiceFunction } from './constructs/service-function.js';
import { LISTEN_AUTHORIZER_SPEC, LISTEN_SPEC, ListenApi, PUSHER_TABLES } from './constructs/listen-api.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServiceStackProps extends StackProps, Omit<ServiceConfig, 'stackName'> {
  /** @default the repository this file is in */
  projectRoot?: string;
  /** @default `<projectRoot>/flows` */
  flowsDir?: string;
  /** Reads CDK context for flow function settings (`flows/functions/settings.json`) by key. */
  flowFunctionContext?: (key: string) => string | undefined;
}

const entries = <K extends string, V>(record: Record<K, V>) => Object.entries(record) as [K, V][];

/**
 * The console's URL behind the custom domain: the console builds its sign-in `redirect_uri` from
 * the origin it is served from, so the hosted UI must allow that one too. The domain maps the whole
 * API, so the console sits beside the webhooks (`<base>/webhooks` → `<base>/console`); a public
 * base not ending in `/webhooks` says nothing of where the console is, and adds no callback.
 */
export function publicConsoleUrls(publicWebhookBaseUrl: string): string[] {
  const api = publicApiBaseUrl(publicWebhookBaseUrl);
  return api === undefined ? [] : [`${api}/console`];
}

/**
 * The API's base URL behind the custom domain, by the same reading as {@link publicConsoleUrls}:
 * `<base>/webhooks` → `<base>`; `undefined` for a public base not ending in `/webhooks`, which
 * says nothing of where the rest of the API is. Step-up proofs are issued (`iss`) and checked
 * under it, and its `/.well-known/jwks.json` is their key set, so a relying service configured
 * with the public name accepts them.
 */
export function publicApiBaseUrl(publicWebhookBaseUrl: string): string | undefined {
  const base = publicWebhookBaseUrl.replace(/\/+$/, '');
  return base.endsWith('/webhooks') ? base.slice(0, -'/webhooks'.length) : undefined;
}


/**
 * The whole service, assembled from `functions/manifest.ts`: the tables, queues, functions and
 * routes it lists, each function granted exactly the access the manifest gives it. A new table,
 * queue, function, grant or route is a manifest change, not a stack change.
 */
export class ServiceStack extends Stack {
  readonly data: DataStores;
  readonly objectStorage: ObjectStorage;
  readonly searchStorage: SearchStorage;
  readonly queues: EventQueues;
  readonly secretsKey: SecretsKey;
  readonly mfaSigningKey: MfaSigningKey;
  readonly flows: Flows;
  readonly flowFunctions: FlowFunctions;
  readonly identity: Identity;
  readonly functions: Record<FunctionName, ServiceFunction>;
  readonly http: HttpRoutes;
  readonly alarms: Alarms;
  /** `flowgate listen`'s endpoint, when context `listenApi` deploys it. */
  readonly listen?: ListenApi;
  /** The receiver's function URL, where trigger URLs point, unless context `webhookFunctionUrl` is false. */
  readonly webhookFunctionUrl?: FunctionUrl;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    const projectRoot = props.projectRoot ?? REPO_ROOT;

    this.data = new DataStores(this, 'Data', { tables: TABLES, removal: props.dataRemovalPolicy });
    this.objectStorage = new ObjectStorage(this, 'Objects', { removal: props.dataRemovalPolicy });
    this.searchStorage = new SearchStorage(this, 'Search', { bucket: this.objectStorage.bucket, removal: props.dataRemovalPolicy });
    this.secretsKey = new SecretsKey(this, 'Secrets', { removal: props.dataRemovalPolicy });
    const retiredMfaKeys = props.settings?.[SETTINGS.mfaRetiredSigningKeyIds.env];
    this.mfaSigningKey = new MfaSigningKey(this, 'MfaSigning', {
      generation: props.mfaSigningKeyGeneration ?? 1,
      retiredKeyArns: SETTINGS.mfaRetiredSigningKeyIds.parse(retiredMfaKeys),
    });
    const consumerTimeoutSeconds = Object.fromEntries(
      entries(QUEUES).map(([name, queue]) => [name, FUNCTIONS[queue.consumer].timeoutSeconds]),
    ) as Record<QueueName, number>;
    this.queues = new EventQueues(this, 'Queues', {
      queues: QUEUES,
      consumerTimeoutSeconds,
      // A burst of webhooks, or of purges, must not take every concurrent execution in the account.
      consumerMaxConcurrency: { flowEvents: props.flowWorkerMaxConcurrency, kvSweep: props.sweeperMaxConcurrency },
    });
    const flowsDir = props.flowsDir ?? resolve(projectRoot, 'flows');
    // Flows' own functions are not the manifest's: no routes, no grants, invoked only by the flows that name them.
    this.flowFunctions = new FlowFunctions(this, 'FlowFunctions', { flowsDir, projectRoot, logLevel: props.logLevel, context: (key) => props.flowFunctionContext?.(key) });
    this.flows = new Flows(this, 'Flows', { flowsDir, functions: this.flowFunctions.functions, logLevel: props.logLevel });

    const functions = {} as Record<FunctionName, ServiceFunction>;
    for (const [name, spec] of entries<FunctionName, FunctionSpec>(FUNCTIONS)) {
      const fn = new ServiceFunction(this, name, {
        name, spec, projectRoot, logLevel: props.logLevel,
        // What the state machines were made from, so GET /flows/{name} shows the flows as deployed.
        ...('readsFlowNames' in spec && { flowDefinitions: this.flows.definitions }),
      });
      this.data.connect(fn, spec.tables, 'queriesIndexes' in spec ? spec.queriesIndexes : undefined);
      this.queues.connectSender(fn, spec.sendsTo);
      if (spec.objectsBucket) this.objectStorage.connect(fn, spec.objectsBucket);
      if ('nativeModules' in spec) this.searchStorage.connect(fn);
      if (spec.secretsKey) this.secretsKey.connect(fn, spec.secretsKey);
      if ('signsMfaTokens' in spec) this.mfaSigningKey.connect(fn);
      if (spec.runsFlows) this.flows.connectRunner(fn);
      if (name === QUEUES.flowEvents.consumer) this.flows.connectBatchRunner(fn);
      functions[name] = fn;
    }
    for (const [name, queue] of entries(QUEUES)) this.queues.connectConsumer(name, functions[queue.consumer]);
    // A quiet trigger's event goes from the receiver straight to the flow worker, the flow queue its way back.
    this.queues.connectDirectInvoker('flowEvents', functions[QUEUES.flowEvents.consumer], functions.webhook);
    // The flow worker dead-letters an event itself after its last failed attempt (run-queued-flow.ts).
    this.queues.connectDeadLetterSender('flowEvents', functions[QUEUES.flowEvents.consumer]);
    this.functions = functions;

    this.http = new HttpRoutes(this, 'Http', {
      routes: ROUTES,
      defaultRoute: DEFAULT_ROUTE,
      functions,
      corsAllowedOrigins: props.corsAllowedOrigins,
      throttle: props.apiThrottle,
      publicRouteThrottle: props.publicRouteThrottle,
    });

    // The receiver's second door: a request to a function URL is billed as the invocation alone,
    // where the API adds $1.00 a million (docs/costs.md). Public as the API's webhook route is: the
    // receiver checks each trigger's own API key or signature. No CORS: the receiver answers
    // preflights itself, as on the API. The API's route keeps answering every trigger.
    if (props.webhookFunctionUrl) this.webhookFunctionUrl = functions.webhook.function.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
    if (props.webhookReservedConcurrency !== undefined) {
      (functions.webhook.function.node.defaultChild as CfnFunction).reservedConcurrentExecutions = props.webhookReservedConcurrency;
    }

    // Browsers send and fetch bytes through presigned URLs: the console (on the API's origin, or the
    // public base's) and the apps the gateway's CORS allowlist names.
    this.objectStorage.allowBrowserOrigins([
      this.http.baseUrl,
      ...(props.publicWebhookBaseUrl ? [new URL(props.publicWebhookBaseUrl).origin] : []),
      ...(props.corsAllowedOrigins ?? []),
    ]);

    // After the API: the hosted UI returns to the console's URL. Functions get the pool's settings
    // in their environment below, so nothing of the API's depends on the pool (no cycle).
    this.identity = new Identity(this, 'Identity', {
      auth: props.auth,
      removal: props.dataRemovalPolicy,
      consoleUrls: [`${this.http.baseUrl}/console`, ...(props.publicWebhookBaseUrl ? publicConsoleUrls(props.publicWebhookBaseUrl) : [])],
      stackName: this.stackName,
      adminGroup: SETTINGS.adminGroup.parse(props.settings?.[SETTINGS.adminGroup.env]),
    });

    // flowgate listen's WebSocket endpoint (context listenApi): its functions read the triggers function's settings.
    if (props.listenApi) {
      this.listen = new ListenApi(this, 'Listen', { projectRoot, logLevel: props.logLevel });
      this.data.connect(this.listen.handler, LISTEN_SPEC.tables);
      this.data.connect(this.listen.authorizer, LISTEN_AUTHORIZER_SPEC.tables);
      this.data.connect(functions.webhook, PUSHER_TABLES);
      this.listen.connectPusher(functions.webhook);
    }

    this.alarms = new Alarms(this, 'Operations', {
      // The flows' own functions crash and get throttled like the service's, so they are watched alike.
      functions: { ...functions, ...Object.fromEntries(entries(this.flowFunctions.functions).map(([name, fn]) => [`flowFunction${name}`, fn])) },
      api: this.http.api,
      deadLetterQueues: this.queues.deadLetterQueues,
      flowQueue: this.queues.queues.flowEvents,
      flows: this.flows.stateMachines,
      ...(this.webhookFunctionUrl && { webhookFunctionUrl: functions.webhook }),
      alarmEmail: props.alarmEmail,
    });

    // Each function's environment, from the settings table: what it reads, valued by the resources
    // above (wiring) or by context (tunable); a setting left unset takes the handler's default.
    const values: Record<string, string | undefined> = {
      ...Object.fromEntries(entries(TABLES).map(([name, table]) => [table.env, this.data.tables[name].tableName])),
      ...Object.fromEntries(entries(QUEUES).map(([name, queue]) => [queue.env, this.queues.queues[name].queueUrl])),
      [SETTINGS.objectsBucket.env]: this.objectStorage.bucket.bucketName,
      [SETTINGS.searchDataUri.env]: this.searchStorage.uri,
      // Deployed, several instances write: each sees the others' commits within a second.
      [SETTINGS.searchReadConsistencySeconds.env]: String(DEPLOYED_READ_CONSISTENCY_SECONDS),
      // Where the SDK's presigned URLs point (virtual-hosted, regional): the console sends bytes there.
      [SETTINGS.objectsTransferOrigin.env]: `https://${this.objectStorage.bucket.bucketRegionalDomainName}`,
      [SETTINGS.flowNames.env]: this.flows.names.join(','),
      [SETTINGS.flowDeadLetterQueueUrl.env]: this.queues.deadLetterQueues.flowEvents.queueUrl,
      [SETTINGS.flowWorkerFunction.env]: functions[QUEUES.flowEvents.consumer].function.functionArn,
      [SETTINGS.flowArnPrefix.env]: this.flows.arnPrefix,
      [SETTINGS.flowBatchArnPrefix.env]: this.flows.batchArnPrefix,
      // Only these: a batch call for any other flow would be denied, and paid for, every time.
      [SETTINGS.flowBatchNames.env]: Object.keys(this.flows.batchStateMachines).join(',') || undefined,
      [SETTINGS.webhookBaseUrl.env]: this.http.webhookBaseUrl,
      [SETTINGS.publicWebhookBaseUrl.env]: props.publicWebhookBaseUrl,
      [SETTINGS.webhookFunctionUrl.env]: this.webhookFunctionUrl?.url,
      // Not the URL itself, which is the receiver's own attribute (a cycle): its id comes with each
      // request (`apiId`), and the form is AWS's for function URLs in the aws partition.
      [SETTINGS.webhookFunctionUrlPattern.env]: this.webhookFunctionUrl && `https://{apiId}.lambda-url.${Aws.REGION}.on.aws`,
      [SETTINGS.secretsKmsKeyId.env]: this.secretsKey.key.keyArn,
      [SETTINGS.mfaSigningKeyId.env]: this.mfaSigningKey.key.keyArn,
      // The public name when there is one: the signer and the verifier read this one setting.
      [SETTINGS.mfaTokenIssuer.env]: (props.publicWebhookBaseUrl && publicApiBaseUrl(props.publicWebhookBaseUrl)) || this.http.baseUrl,
      ...this.identity.environment,
      ...props.settings,
    };
    const listenFunctions = this.listen ? [['triggers', this.listen.handler], ['triggers', this.listen.authorizer]] : [];
    for (const [name, fn] of [...entries(functions), ...listenFunctions] as [FunctionName, ServiceFunction][]) {
      for (const setting of settingsReadBy(name)) {
        const value = values[SETTINGS[setting].env];
        if (value !== undefined) fn.addEnvironment(SETTINGS[setting].env, value);
      }
    }

    new CfnOutput(this, 'BaseUrl', { value: this.http.baseUrl, description: 'Gateway base URL' });
    new CfnOutput(this, 'WebhookUrl', { value: this.http.webhookBaseUrl, description: 'Webhook base URL: a trigger receives at <WebhookUrl>/<webhook_id>' });
    if (this.webhookFunctionUrl) {
      new CfnOutput(this, 'WebhookFunctionUrl', { value: this.webhookFunctionUrl.url, description: 'The receiver\'s function URL: a trigger receives at <WebhookFunctionUrl><webhook_id> (its url), without an API Gateway request' });
    }
    if (props.publicWebhookBaseUrl) {
      new CfnOutput(this, 'PublicWebhookUrl', { value: props.publicWebhookBaseUrl, description: 'Webhook base URL behind the custom domain (publicWebhookBaseUrl)' });
    }
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn, description: 'SNS topic the alarms notify: subscribe to it (context alarmEmail, or aws sns subscribe)' });
    new CfnOutput(this, 'DashboardName', { value: this.alarms.dashboard.dashboardName, description: 'CloudWatch dashboard of the service' });
    for (const [name, dlq] of entries(this.queues.deadLetterQueues)) {
      const prefix = `${name[0]!.toUpperCase()}${name.slice(1)}DeadLetterQueue`;
      new CfnOutput(this, `${prefix}Url`, { value: dlq.queueUrl, description: `Dead-letter queue of ${name}: inspect from here (aws sqs receive-message --queue-url)` });
      new CfnOutput(this, `${prefix}Arn`, { value: dlq.queueArn, description: `Dead-letter queue of ${name}: redrive from here (aws sqs start-message-move-task --source-arn)` });
    }
    // The flow worker sends to its dead-letter queue itself (run-queued-flow.ts): a redrive of those
    // messages names the flow queue as its destination rather than relying on a recorded source.
    new CfnOutput(this, 'FlowEventsQueueArn', { value: this.queues.queues.flowEvents.queueArn, description: 'The flow queue: redrive its dead-letter queue to here (aws sqs start-message-move-task --destination-arn)' });
  }
}
