import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ProofLedger } from '../../domain/accounts/ports.js';
import { ifConditionHolds } from './conditional.js';

/**
 * A spent proof is one item `MFA_PROOF#<jti>` / `SPENT`, written with `attribute_not_exists(pk)`:
 * of two requests spending one proof, exactly one write succeeds. `expires_at` (the table's TTL)
 * removes it once the proof could no longer be accepted anyway.
 */
export class DynamoProofLedger implements ProofLedger {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  spend(input: { jti: string; expiresAt: number }): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: { pk: `MFA_PROOF#${input.jti}`, sk: 'SPENT', expires_at: input.expiresAt },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }
}
