import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/**
 * Runs a conditional DynamoDB write: true when it was written, false when its condition did not
 * hold (`ConditionalCheckFailedException`); any other error propagates (a 500, or the caller's).
 */
export async function ifConditionHolds(send: () => Promise<unknown>): Promise<boolean> {
  try {
    await send();
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
