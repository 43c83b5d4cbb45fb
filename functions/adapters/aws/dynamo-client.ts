import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Created once per execution environment and shared by every DynamoDB adapter of a function.
 * Endpoint, region and credentials come from the environment (`AWS_ENDPOINT_URL_DYNAMODB` locally).
 */
export const dynamoDocumentClient = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true },
});
