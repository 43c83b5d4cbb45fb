import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { clientOptions, oncePerConfig } from '../clients.js';

/** The DynamoDB document client, shared by every DynamoDB adapter of a function. */
export const dynamoClient = oncePerConfig((aws) =>
  DynamoDBDocumentClient.from(new DynamoDBClient(clientOptions(aws, 'dynamodb')), { marshallOptions: { removeUndefinedValues: true } }));
