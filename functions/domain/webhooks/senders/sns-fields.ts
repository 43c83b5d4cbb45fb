/**
 * The fields Amazon SNS signs, in the order it signs them, for each message `Type`:
 * https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
 * Its own module: the verifier builds the signed string from it, and the catalog row hands a flow
 * only these, without loading the verifier.
 */
export const SNS_SIGNED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};
