import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/**
 * Whether a receive could still return a message from the queue, now or later: one is visible, or
 * delayed (a sweep's first look, a final pass). Messages received and not yet deleted do not count.
 * A test that waits for what a queue will hold asks this before an empty long poll, instead of
 * taking a second or more of empty polls as the end. Meant for a queue of the test's own: on a
 * shared one, another test's delayed message would count.
 *
 * local-aws-sqs counts a received message in `ApproximateNumberOfMessages` as well as in
 * `ApproximateNumberOfMessagesNotVisible` (AWS counts it in the second only), so here the visible
 * ones are the difference.
 */
export async function messagesToCome(sqs: SQSClient, queueUrl: string): Promise<boolean> {
  const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({
    QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
  }));
  const visible = Number(Attributes.ApproximateNumberOfMessages) - Number(Attributes.ApproximateNumberOfMessagesNotVisible);
  return visible > 0 || Number(Attributes.ApproximateNumberOfMessagesDelayed) > 0;
}
