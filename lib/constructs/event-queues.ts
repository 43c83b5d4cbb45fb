import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { MESSAGE_RETENTION_DAYS, MIN_RECEIVES_FOR_LAMBDA_CONSUMER, type QueueName } from '../../functions/manifest.js';
import type { ServiceFunction } from './service-function.js';

/** What `QUEUES` in the manifest says about one queue. */
export interface QueueSpec {
  /** Environment variable that carries the queue's URL to the functions that send to it. */
  env: string;
  maxReceiveCount: number;
  batchSize: number;
  /** How long the event source mapping gathers messages before it invokes the consumer (Lambda's `MaximumBatchingWindowInSeconds`); none when absent. */
  batchingWindowSeconds?: number;
  /** A FIFO queue (its dead-letter queue FIFO too, as SQS requires): messages carry a group and a deduplication id. */
  fifo?: boolean;
  /** Seconds each message waits before it can be received (the queue's `DelaySeconds`). */
  delaySeconds?: number;
}

export interface EventQueuesProps {
  queues: Record<QueueName, QueueSpec>;
  /** The consumer function's timeout for each queue; the visibility timeout is derived from it. */
  consumerTimeoutSeconds: Record<QueueName, number>;
  /** At most this many concurrent consumer invocations per queue (the event source's maximum concurrency). */
  consumerMaxConcurrency?: Partial<Record<QueueName, number>>;
}

/**
 * AWS asks for a visibility timeout of at least six times the consumer's timeout, so that a batch
 * still being retried after a throttled invocation is not handed out twice.
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 */
export const VISIBILITY_TIMEOUT_MULTIPLE = 6;
/**
 * How long Lambda keeps a direct invocation of a queue's consumer that it could not run yet
 * (throttled): past this, it goes to the queue through the on-failure destination, where the
 * event source's maximum concurrency applies (Lambda keeps such events up to 6 hours).
 */
export const DIRECT_INVOKE_MAX_EVENT_AGE_SECONDS = 3_600;
/** SQS's limit on queue names. */
const MAX_QUEUE_NAME_LENGTH = 80;

/**
 * The manifest's queues, named `<stack>-<queue>`, each with a dead-letter queue after
 * `maxReceiveCount` receives that only its own queue may use, the manifest's retention
 * (`MESSAGE_RETENTION_DAYS`), SQS-managed encryption and TLS-only access, and the consumer wired
 * through an event source mapping that reports partial batch failures (only the failed messages
 * come back).
 */
export class EventQueues extends Construct {
  readonly queues: Record<QueueName, Queue>;
  readonly deadLetterQueues: Record<QueueName, Queue>;
  private readonly specs: Record<QueueName, QueueSpec>;
  private readonly consumerMaxConcurrency: Partial<Record<QueueName, number>>;

  constructor(scope: Construct, id: string, props: EventQueuesProps) {
    super(scope, id);
    this.specs = props.queues;
    this.consumerMaxConcurrency = props.consumerMaxConcurrency ?? {};
    const stack = Stack.of(this);
    const retentionPeriod = Duration.days(MESSAGE_RETENTION_DAYS);
    const queues = {} as Record<QueueName, Queue>;
    const deadLetterQueues = {} as Record<QueueName, Queue>;
    for (const [name, spec] of Object.entries(props.queues) as [QueueName, QueueSpec][]) {
      if (spec.maxReceiveCount < MIN_RECEIVES_FOR_LAMBDA_CONSUMER) {
        throw new Error(`queue ${name}: maxReceiveCount ${spec.maxReceiveCount} is under ${MIN_RECEIVES_FOR_LAMBDA_CONSUMER}, which AWS recommends for Lambda consumers (throttled invocations use up receives)`);
      }
      // The DLQ's redrive allow policy names its source queue, and the source queue's redrive
      // policy names the DLQ: referring to each other would be a circular dependency in
      // CloudFormation. So the source queue gets a fixed name and the DLQ names it by an ARN
      // built from that name (no reference); SQS does not require the source queue to exist yet.
      // A FIFO queue's name ends in `.fifo`.
      const queueName = `${stack.stackName}-${name}${spec.fifo ? '.fifo' : ''}`;
      if (queueName.length > MAX_QUEUE_NAME_LENGTH) {
        throw new Error(`queue name ${queueName} is over ${MAX_QUEUE_NAME_LENGTH} characters: shorten the stack name`);
      }
      const queueArn = stack.formatArn({ service: 'sqs', resource: queueName, arnFormat: ArnFormat.NO_RESOURCE_NAME });
      const dlq = new Queue(this, `${name}DeadLetters`, {
        retentionPeriod,
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        ...(spec.fifo && { fifo: true }),
        // Only its own queue may dead-letter here; a redrive (start-message-move-task) without a
        // destination moves the messages back to it.
        redriveAllowPolicy: {
          redrivePermission: RedrivePermission.BY_QUEUE,
          sourceQueues: [Queue.fromQueueArn(this, `${name}Source`, queueArn)],
        },
      });
      queues[name] = new Queue(this, name, {
        queueName,
        retentionPeriod,
        // A message received at the start of a batching window is in flight for the window as well.
        visibilityTimeout: Duration.seconds(props.consumerTimeoutSeconds[name] * VISIBILITY_TIMEOUT_MULTIPLE + (spec.batchingWindowSeconds ?? 0)),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: spec.maxReceiveCount },
        ...(spec.fifo && { fifo: true, contentBasedDeduplication: false }),
        ...(spec.delaySeconds !== undefined && { deliveryDelay: Duration.seconds(spec.delaySeconds) }),
      });
      deadLetterQueues[name] = dlq;
    }
    this.queues = queues;
    this.deadLetterQueues = deadLetterQueues;
  }

  /** Lets the function send to each named queue (its URL reaches the function through the settings table). */
  connectSender(fn: ServiceFunction, sendsTo: readonly QueueName[]): void {
    for (const name of sendsTo) {
      this.queues[name].grantSendMessages(fn);
    }
  }

  /**
   * Lets the queue's consumer send to the queue's dead-letter queue (SendMessage, nothing else):
   * the flow worker puts an event there itself after its last failed attempt, its attempts counted
   * in the message, so that a redrive goes on numbering them. The dead-letter queue's redrive allow
   * policy limits only which queues may name it in a redrive policy, not who may send to it.
   */
  connectDeadLetterSender(name: QueueName, fn: ServiceFunction): void {
    // Not grantSendMessages: the worker needs no GetQueueAttributes or GetQueueUrl (it has the URL),
    // and the queue is SQS-managed encrypted, so no KMS grant either.
    fn.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.deadLetterQueues[name].queueArn] }));
  }

  /**
   * Lets `invoker` hand a message to the queue's consumer directly, as an asynchronous invocation
   * (`functions/domain/flows/direct-first-queue.ts`), with the queue as the way back: Lambda does
   * not retry the invocation itself (retries 0); an invocation that fails (throws, times out) or
   * waits longer than {@link DIRECT_INVOKE_MAX_EVENT_AGE_SECONDS} is sent to the queue as Lambda's
   * destination record, which the consumer runs as the retry (its retries, backoff and dead-letter
   * queue then are the queue's). Only `invoker` may invoke the consumer, and only it.
   */
  connectDirectInvoker(name: QueueName, consumer: ServiceFunction, invoker: ServiceFunction): void {
    // The function itself, unqualified: not `<arn>:*` (its versions and aliases), which it has none of.
    invoker.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [consumer.function.functionArn] }));
    consumer.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.seconds(DIRECT_INVOKE_MAX_EVENT_AGE_SECONDS),
      onFailure: new SqsDestination(this.queues[name]),
    });
  }

  /**
   * Makes the function the queue's consumer, bounded by the queue's maximum concurrency when one is
   * given. The event source mapping grants it receive, delete and ChangeMessageVisibility, with
   * which it sets when a failed message comes back.
   */
  connectConsumer(name: QueueName, fn: ServiceFunction): void {
    fn.function.addEventSource(new SqsEventSource(this.queues[name], {
      batchSize: this.specs[name].batchSize,
      ...(this.specs[name].batchingWindowSeconds !== undefined && { maxBatchingWindow: Duration.seconds(this.specs[name].batchingWindowSeconds!) }),
      reportBatchItemFailures: true,
      maxConcurrency: this.consumerMaxConcurrency[name],
    }));
  }
}
