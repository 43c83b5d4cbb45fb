/** Loaded by `idempotencyOnFirstUse`: the idempotency step and its DynamoDB store, one chunk of the bundle. */
import type { Clock } from '../../../domain/clock.js';
import type { RandomBytes } from '../../../domain/random-bytes.js';
import { idempotentRoutes, type IdempotencyRunner } from '../../../shared/idempotent-route.js';
import type { AwsClients } from '../clients.js';
import { dynamoClient } from '../clients/dynamo.js';
import { DynamoIdempotencyStore } from '../dynamo-idempotency-store.js';

export const idempotency = (table: string, aws: AwsClients, now: Clock, randomBytes: RandomBytes): IdempotencyRunner =>
  idempotentRoutes({ store: new DynamoIdempotencyStore(dynamoClient(aws), table), now, randomBytes });
