import { SQSClient } from '@aws-sdk/client-sqs';
import { clientOptions, oncePerConfig } from '../clients.js';

export const sqsClient = oncePerConfig((aws) => new SQSClient(clientOptions(aws, 'sqs')));
