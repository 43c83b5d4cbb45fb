import { createAwsClients } from '../../functions/adapters/aws/clients.js';
import { dynamoClient } from '../../functions/adapters/aws/clients/dynamo.js';

/**
 * The cold-start bench's second reference, the SDK floor: the DynamoDB document client every
 * function but `system` creates at init, made exactly as they make it, and nothing of ours. What a
 * function imports beyond this is the part its own code controls.
 */
const dynamo = dynamoClient(createAwsClients());
export const handler = async () => ({ statusCode: 204, body: String(dynamo.config.maxAttempts !== undefined) });
