import { SQSClient } from '@aws-sdk/client-sqs';

/** Created once per execution environment; `AWS_ENDPOINT_URL_SQS` points it at the local engine. */
export const sqsClient = new SQSClient({});
