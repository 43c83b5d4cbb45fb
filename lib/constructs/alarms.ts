import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { MAX_REFUSED_RECORDS_PER_MINUTE } from '../../functions/domain/webhooks/refusal-budget.js';
import { METRIC, METRIC_DIMENSION, METRICS_NAMESPACE, METRICS_SERVICE } from '../../functions/shared/metric-names.js';
import type { ServiceFunction } from './service-function.js';

/** The period every alarm looks at. */
const PERIOD = Duration.minutes(5);

/**
 * Thresholds, each with why. An alarm that fires on what the service handles by itself teaches
 * people to ignore it, so each one marks something that needs a person.
 */
export const ALARM_THRESHOLDS = {
  /**
   * A message reaches a dead-letter queue only after its consumer failed it on every receive
   * (`maxReceiveCount`, 5): it will not be processed without someone looking, so one is enough.
   */
  deadLetterMessages: 1,
  /**
   * Failed or timed-out executions of one flow in 5 minutes. A single failure is the flow's answer
   * to one event (wait mode tells the sender 502; acknowledge mode retries with back-off); five in
   * five minutes is a flow, or what it calls, that is broken.
   */
  flowFailures: 5,
  /**
   * Percentage of the API's requests answered 5xx in 5 minutes, counted only from 20 requests on so
   * that one error among a handful does not page anyone. 5xx includes a wait-mode flow's own 502 /
   * 504, which a healthy service answers now and then; 5% is well above that.
   */
  api5xxPercent: 5,
  api5xxMinRequests: 20,
  /**
   * Lambda errors of one function in 5 minutes. The handlers turn every failure they expect into
   * an answer (4xx/5xx JSON, or a partial batch failure), so an invocation error is a crash, an
   * init failure (a bad setting) or a timeout: each one is a bug or an outage.
   */
  lambdaErrors: 1,
  /**
   * Throttled invocations of one function in 5 minutes. No function has reserved concurrency and
   * the flow worker's event source caps its own concurrency, so a throttle means the account's
   * concurrent executions ran out: gateway callers got errors. One is enough to look.
   */
  lambdaThrottles: 1,
  /**
   * Age of the flow queue's oldest message, in seconds. A healthy message waits for a worker for
   * seconds; a failing one comes back after 15 s, 30 s, 1 min and 2 min, and an acknowledged flow
   * runs at most 5 minutes, so ten minutes of age means the worker is not keeping up or not running.
   * (SQS leaves a message received three times or more out of this metric.)
   * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
   */
  flowQueueOldestMessageSeconds: 600,
} as const;

export interface AlarmsProps {
  functions: Record<string, ServiceFunction>;
  api: HttpApi;
  /** Dead-letter queues by the name of the queue they serve. */
  deadLetterQueues: Record<string, Queue>;
  flowQueue: Queue;
  flows: Record<string, StateMachine>;
  /** The function behind the webhook function URL, when there is one: its URL's answers are watched as the API's are. */
  webhookFunctionUrl?: ServiceFunction;
  /** Subscribed to the alarm topic when given (SNS emails it a confirmation link first). */
  alarmEmail?: string;
}

/**
 * The operator's view: alarms on what needs a person, an encrypted SNS topic they notify (and,
 * with context `alarmEmail`, an email subscription), and a dashboard of the service's own metrics
 * (`functions/shared/metric-names.ts`) beside the AWS ones the alarms watch.
 */
export class Alarms extends Construct {
  readonly topic: Topic;
  readonly key: Key;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const stack = Stack.of(this);

    // CloudWatch publishes to an encrypted topic only when the key lets it use the key, and the
    // policy of the AWS managed key (alias/aws/sns) cannot be changed: alarms on a topic sealed with
    // it are dropped. Hence a key of the topic's own (not the secrets key, whose policy is about
    // secrets), usable by CloudWatch only for this account's alarms.
    // https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
    this.key = new Key(this, 'TopicKey', {
      description: 'Flowgate: encrypts the alarm topic',
      enableKeyRotation: true,
      // Nothing outlives the stack under this key (SNS keeps no messages), so it goes with it.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    const fromThisAccountsAlarms = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
    };
    this.key.addToResourcePolicy(new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: fromThisAccountsAlarms,
    }));
    this.topic = new Topic(this, 'Topic', {
      displayName: 'Flowgate alarms',
      masterKey: this.key,
      enforceSSL: true,
    });
    // `enforceSSL` gives the topic a policy of its own, which replaces SNS's default one: without
    // this statement it holds only the TLS deny, nothing lets CloudWatch publish, and every alarm
    // action fails ("no resource-based policy allows the SNS:Publish action").
    // https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger
    this.topic.addToResourcePolicy(new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [this.topic.topicArn],
      conditions: fromThisAccountsAlarms,
    }));
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));

    const alarm = (name: string, metric: IMetric, threshold: number, description: string) => {
      const created = new Alarm(this, name, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No data is no trouble: an idle queue or function publishes nothing.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(new SnsAction(this.topic));
      created.addOkAction(new SnsAction(this.topic));
      this.alarms.push(created);
      return created;
    };

    for (const [name, dlq] of Object.entries(props.deadLetterQueues)) {
      alarm(`${name}DeadLetters`, dlq.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }), ALARM_THRESHOLDS.deadLetterMessages,
        `Messages in the ${name} dead-letter queue: their processing failed on every receive. Inspect, fix, then redrive (docs/operating.md: Metrics and alarms).`);
    }
    // Counted by the service for every run of the flow, in its own execution or in a batch's
    // (where one event's failure is caught and is not the execution's): the state machines'
    // own ExecutionsFailed would miss those.
    for (const name of Object.keys(props.flows)) {
      const runs = (metricName: string) => new Metric({
        namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: METRICS_SERVICE, [METRIC_DIMENSION.flow]: name }, statistic: 'Sum', period: PERIOD,
      });
      const failures = new MathExpression({
        expression: 'failed + timedOut',
        usingMetrics: { failed: runs(METRIC.flowRunsFailed), timedOut: runs(METRIC.flowRunsTimedOut) },
        period: PERIOD,
        label: `${name} failed or timed out`,
      });
      alarm(`Flow${name.replace(/[^A-Za-z0-9]/g, '')}Failures`, failures, ALARM_THRESHOLDS.flowFailures,
        `Flow ${name}: ${ALARM_THRESHOLDS.flowFailures}+ runs failed or timed out in 5 minutes. Look at its executions (GET /triggers/{id}/executions, the state machine's logs).`);
    }
    const api5xxRate = new MathExpression({
      expression: `IF(requests >= ${ALARM_THRESHOLDS.api5xxMinRequests}, 100 * errors / requests, 0)`,
      usingMetrics: {
        errors: props.api.metricServerError({ period: PERIOD, statistic: 'Sum' }),
        requests: props.api.metricCount({ period: PERIOD, statistic: 'Sum' }),
      },
      period: PERIOD,
      label: 'HTTP API 5xx %',
    });
    alarm('Api5xxRate', api5xxRate, ALARM_THRESHOLDS.api5xxPercent,
      `${ALARM_THRESHOLDS.api5xxPercent}%+ of the HTTP API's requests answered 5xx in 5 minutes. Check the functions' error alarms and logs, and the access log's status and fnError (the function's error).`);
    // The function URL's own counts (AWS/Lambda, by FunctionName): it has no access log, and its
    // requests are not the API's. Url5xxCount counts what the function answered 5xx and what the
    // URL answered for it (a crash or a throttle).
    const urlMetric = (fn: ServiceFunction, metricName: string) => fn.function.metric(metricName, { period: PERIOD, statistic: 'Sum' });
    const webhookUrl5xxRate = props.webhookFunctionUrl && new MathExpression({
      // Ids of their own: the dashboard draws this beside the API's expression, and ids are per graph.
      expression: `IF(urlRequests >= ${ALARM_THRESHOLDS.api5xxMinRequests}, 100 * urlErrors / urlRequests, 0)`,
      usingMetrics: { urlErrors: urlMetric(props.webhookFunctionUrl, 'Url5xxCount'), urlRequests: urlMetric(props.webhookFunctionUrl, 'UrlRequestCount') },
      period: PERIOD,
      label: 'webhook function URL 5xx %',
    });
    if (webhookUrl5xxRate) {
      alarm('WebhookUrl5xxRate', webhookUrl5xxRate, ALARM_THRESHOLDS.api5xxPercent,
        `${ALARM_THRESHOLDS.api5xxPercent}%+ of the webhook function URL's requests answered 5xx in 5 minutes. Check the webhook function's error and throttle alarms and its log group, where each failed request's line names its request id.`);
    }
    for (const [name, fn] of Object.entries(props.functions)) {
      alarm(`${name}Errors`, fn.function.metricErrors({ period: PERIOD, statistic: 'Sum' }), ALARM_THRESHOLDS.lambdaErrors,
        `The ${name} function crashed, failed its init or timed out. Its log group has the error.`);
      alarm(`${name}Throttles`, fn.function.metricThrottles({ period: PERIOD, statistic: 'Sum' }), ALARM_THRESHOLDS.lambdaThrottles,
        `The ${name} function was throttled: the account's concurrent executions ran out. Lower API throttling or ask for a higher Lambda quota.`);
    }
    alarm('FlowQueueOldestMessage', props.flowQueue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' }), ALARM_THRESHOLDS.flowQueueOldestMessageSeconds,
      'Acknowledged webhooks wait over 10 minutes for their flow: the flow worker is failing, throttled or capped (flowWorkerMaxConcurrency).');

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${stack.stackName}-operations`.slice(0, 255),
      defaultInterval: Duration.hours(3),
    });
    const own = (metricName: string, label: string) =>
      new Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: METRICS_SERVICE }, statistic: 'Sum', period: PERIOD, label });
    // Metrics with a second dimension: every value of it, found by SEARCH (dashboards allow it, alarms do not).
    const byDimension = (metricName: string, dimension: string, statistic = 'Sum', label = '') =>
      new MathExpression({ expression: `SEARCH('{${METRICS_NAMESPACE},service,${dimension}} MetricName="${metricName}"', '${statistic}', 300)`, label, period: PERIOD });
    this.dashboard.addWidgets(
      new TextWidget({ markdown: '# Flowgate\nService metrics (namespace `Flowgate`, from the functions\' metric lines by metric filters) and what the alarms watch. docs/operating.md: "Operating it".', width: 24, height: 2 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Webhooks',
        width: 12,
        left: [
          own(METRIC.webhooksReceived, 'received'),
          own(METRIC.webhooksAccepted, 'accepted'),
          own(METRIC.webhooksIgnored, 'ignored'),
          own(METRIC.webhooksDuplicate, 'duplicate'),
          own(METRIC.deliveriesReplayed, 'replayed'),
        ],
      }),
      new GraphWidget({
        title: 'Webhooks refused, by reason',
        width: 12,
        left: [byDimension(METRIC.webhooksRefused, METRIC_DIMENSION.reason)],
        // Past the recording budget (10 a trigger a minute), refusals are counted here and not recorded as executions.
        right: [own(METRIC.webhookRefusalsNotRecorded, `not recorded (over ${MAX_REFUSED_RECORDS_PER_MINUTE}/min per trigger)`)],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Flow runs, by flow',
        width: 12,
        left: [
          byDimension(METRIC.flowRunsSucceeded, METRIC_DIMENSION.flow, 'Sum', 'succeeded'),
          byDimension(METRIC.flowRunsFailed, METRIC_DIMENSION.flow, 'Sum', 'failed'),
          byDimension(METRIC.flowRunsTimedOut, METRIC_DIMENSION.flow, 'Sum', 'timed out'),
        ],
      }),
      new GraphWidget({ title: 'Flow run duration (ms, p90)', width: 12, left: [byDimension(METRIC.flowRunDuration, METRIC_DIMENSION.flow, 'p90')] }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'KV purges and items reclaimed', width: 8, left: [own(METRIC.kvPurges, 'purges')], right: [own(METRIC.kvItemsReclaimed, 'items reclaimed')] }),
      new GraphWidget({ title: 'TOTP', width: 8, left: [own(METRIC.totpConfirmationsFailed, 'confirmations failed'), own(METRIC.totpLockouts, 'lockouts')] }),
      new GraphWidget({
        title: props.webhookFunctionUrl ? 'HTTP API and webhook function URL' : 'HTTP API',
        width: 8,
        left: [props.api.metricCount({ period: PERIOD, label: 'API requests' }), ...(props.webhookFunctionUrl ? [urlMetric(props.webhookFunctionUrl, 'UrlRequestCount').with({ label: 'function URL requests' })] : [])],
        right: [api5xxRate, ...(webhookUrl5xxRate ? [webhookUrl5xxRate] : [])],
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Dead-letter queues (messages)', width: 8, left: Object.entries(props.deadLetterQueues).map(([name, dlq]) => dlq.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: name })) }),
      new GraphWidget({ title: 'Flow queue: oldest message (s)', width: 8, left: [props.flowQueue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' })] }),
      new GraphWidget({
        title: 'Lambda errors and throttles',
        width: 8,
        left: Object.entries(props.functions).map(([name, fn]) => fn.function.metricErrors({ period: PERIOD, label: `${name} errors` })),
        right: Object.entries(props.functions).map(([name, fn]) => fn.function.metricThrottles({ period: PERIOD, label: `${name} throttles` })),
      }),
    );
  }
}
