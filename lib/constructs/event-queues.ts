import { Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueName } from '../../functions/manifest.js';
import type { ServiceFunction } from './service-function.js';

/** What `QUEUES` in the manifest says about one queue. */
export interface QueueSpec {
  /** Environment variable that carries the queue's URL to the functions that send to it. */
  env: string;
  maxReceiveCount: number;
  batchSize: number;
}

export interface EventQueuesProps {
  queues: Record<QueueName, QueueSpec>;
  /** The consumer function's timeout for each queue; the visibility timeout is derived from it. */
  consumerTimeoutSeconds: Record<QueueName, number>;
}

/**
 * AWS asks for a visibility timeout of at least six times the consumer's timeout, so that a batch
 * still being retried after a throttled invocation is not handed out twice.
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 */
export const VISIBILITY_TIMEOUT_MULTIPLE = 6;
/** SQS's maximum; a message lands in a DLQ because something is wrong, and that takes time to look at. */
const DLQ_RETENTION = Duration.days(14);

/**
 * The manifest's queues, each with a dead-letter queue after `maxReceiveCount` receives, SQS-managed
 * encryption and TLS-only access, and the consumer wired through an event source mapping that
 * reports partial batch failures (only the failed messages come back).
 */
export class EventQueues extends Construct {
  readonly queues: Record<QueueName, Queue>;
  readonly deadLetterQueues: Record<QueueName, Queue>;
  private readonly specs: Record<QueueName, QueueSpec>;

  constructor(scope: Construct, id: string, props: EventQueuesProps) {
    super(scope, id);
    this.specs = props.queues;
    const queues = {} as Record<QueueName, Queue>;
    const deadLetterQueues = {} as Record<QueueName, Queue>;
    for (const [name, spec] of Object.entries(props.queues) as [QueueName, QueueSpec][]) {
      const dlq = new Queue(this, `${name}DeadLetters`, {
        retentionPeriod: DLQ_RETENTION,
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      queues[name] = new Queue(this, name, {
        visibilityTimeout: Duration.seconds(props.consumerTimeoutSeconds[name] * VISIBILITY_TIMEOUT_MULTIPLE),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: spec.maxReceiveCount },
      });
      deadLetterQueues[name] = dlq;
    }
    this.queues = queues;
    this.deadLetterQueues = deadLetterQueues;
  }

  /** Lets the function send to each named queue and passes the queue's URL. */
  connectSender(fn: ServiceFunction, sendsTo: readonly QueueName[]): void {
    for (const name of sendsTo) {
      this.queues[name].grantSendMessages(fn);
      fn.addEnvironment(this.specs[name].env, this.queues[name].queueUrl);
    }
  }

  /**
   * Makes the function the queue's consumer. The event source mapping grants it receive, delete and
   * ChangeMessageVisibility; the URL lets it set when a failed message comes back.
   */
  connectConsumer(name: QueueName, fn: ServiceFunction): void {
    fn.addEnvironment(this.specs[name].env, this.queues[name].queueUrl);
    fn.function.addEventSource(new SqsEventSource(this.queues[name], {
      batchSize: this.specs[name].batchSize,
      reportBatchItemFailures: true,
    }));
  }
}
