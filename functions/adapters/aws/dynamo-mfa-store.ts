import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MfaStore, TotpFactor } from '../../domain/accounts/index.js';
import { ifConditionHolds } from './conditional.js';

/** Everything about one user (token `sub`) lives under one partition of the accounts table. */
export const userPartitionKey = (subject: string): string => `USER#${subject}`;
const TOTP_FACTOR_SK = 'MFA#TOTP';

/**
 * One item per confirmed factor: `sealed_secret`, `time_step`, `confirmed_at` and the unused
 * recovery codes as a string set of hashes. Keeping the hashes on the factor item makes
 * registration one conditional put, atomic without TransactWriteItems (which dynalite lacks):
 * the loser of two concurrent confirmations can never leave its recovery codes next to the
 * winner's secret, and a crash cannot store a factor without its codes. Each code is consumed by
 * one conditional update that removes it from the set, so it works once.
 */
export class DynamoMfaStore implements MfaStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  async hasTotpFactor(subject: string): Promise<boolean> {
    const { Item } = await this.client.send(new GetCommand({
      TableName: this.table,
      Key: { pk: userPartitionKey(subject), sk: TOTP_FACTOR_SK },
      ProjectionExpression: 'pk',
      ConsistentRead: true,
    }));
    return Item !== undefined;
  }

  createTotpFactor(subject: string, factor: TotpFactor): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        pk: userPartitionKey(subject),
        sk: TOTP_FACTOR_SK,
        sealed_secret: factor.sealedSecret,
        time_step: factor.timeStep,
        confirmed_at: factor.confirmedAt,
        // DynamoDB has no empty sets; an absent attribute means no codes left.
        recovery_code_hashes: factor.recoveryCodeHashes.length > 0 ? new Set(factor.recoveryCodeHashes) : undefined,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  async consumeRecoveryCode(subject: string, codeHash: string): Promise<number | undefined> {
    let left: Set<string> | undefined;
    const consumed = await ifConditionHolds(async () => {
      const { Attributes } = await this.client.send(new UpdateCommand({
        TableName: this.table,
        Key: { pk: userPartitionKey(subject), sk: TOTP_FACTOR_SK },
        UpdateExpression: 'DELETE recovery_code_hashes :consumed',
        // False for a missing item too, so this never creates one.
        ConditionExpression: 'contains(recovery_code_hashes, :hash)',
        ExpressionAttributeValues: { ':consumed': new Set([codeHash]), ':hash': codeHash },
        ReturnValues: 'UPDATED_NEW',
      }));
      left = Attributes?.recovery_code_hashes as Set<string> | undefined;
    });
    return consumed ? left?.size ?? 0 : undefined;
  }
}
