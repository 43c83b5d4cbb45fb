import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_FACTOR_NAME } from '../../domain/accounts/confirm-registration.js';
import type { MfaRecord, MfaStore, TotpFactor } from '../../domain/accounts/index.js';
import { ifConditionHolds } from './conditional.js';

/** Everything about one user (token `sub`) lives under one partition of the accounts table. */
export const userPartitionKey = (subject: string): string => `USER#${subject}`;
const MFA_SK = 'MFA#TOTP';
/** The id an item from before several factors gives its one factor. */
const LEGACY_FACTOR_ID = 'totp';
/** Rounds of read-then-write lost to concurrent removals before giving up (a 500). */
const MAX_REMOVE_ROUNDS = 5;

interface StoredFactor {
  name: string;
  sealed_secret: string;
  time_step: number;
  created_at: string;
  last_used_at?: string;
}

const toStored = (factor: TotpFactor): StoredFactor => ({
  name: factor.name, sealed_secret: factor.sealedSecret, time_step: factor.timeStep, created_at: factor.createdAt,
  ...(factor.lastUsedAt !== undefined && { last_used_at: factor.lastUsedAt }),
});

/**
 * One item per user: its factors as a map by id (`factors.<id>`: name, sealed secret, last
 * accepted time step, created and last used, and `spent_by`, the random id of the write that
 * recorded the step), `factor_count`, `account_id`, the unused recovery codes as a string set of
 * hashes and `last_recovery_spend` (the id of the write that last removed one). Ten factors stay within a few KB. Keeping it all on
 * one item makes every change one conditional write, atomic without TransactWriteItems (which
 * dynalite lacks): the first factor and its codes appear together, the last factor and the codes
 * go together, a time step advances only past the stored one, a new set of codes replaces the old.
 */
export class DynamoMfaStore implements MfaStore {
  constructor(private readonly client: DynamoDBDocumentClient, private readonly table: string) {}

  private key(subject: string) {
    return { pk: userPartitionKey(subject), sk: MFA_SK };
  }

  async hasTotpFactor(subject: string): Promise<boolean> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: this.key(subject), ProjectionExpression: 'pk', ConsistentRead: true }));
    return Item !== undefined;
  }

  async getMfa(subject: string): Promise<MfaRecord | undefined> {
    let { Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: this.key(subject), ConsistentRead: true }));
    if (Item && Item.factors === undefined && typeof Item.sealed_secret === 'string') {
      await this.upgradeSingleFactor(subject, Item);
      ({ Item } = await this.client.send(new GetCommand({ TableName: this.table, Key: this.key(subject), ConsistentRead: true })));
    }
    if (!Item) return undefined;
    const factors = Object.entries((Item.factors ?? {}) as Record<string, StoredFactor>).map(([id, stored]) => ({
      id, name: stored.name, sealedSecret: stored.sealed_secret, timeStep: stored.time_step, createdAt: stored.created_at,
      ...(stored.last_used_at !== undefined && { lastUsedAt: stored.last_used_at }),
    }));
    return {
      // An absent `account_id` means the user's own account, as a token without one does.
      accountId: (Item.account_id as string | undefined) ?? subject,
      factors,
      recoveryCodesLeft: (Item.recovery_code_hashes as Set<string> | undefined)?.size ?? 0,
    };
  }

  /**
   * An item written before users could have several factors holds its one factor at the top
   * (`sealed_secret`, `time_step`, `confirmed_at`): it becomes the factor `totp` of the map, named
   * as a confirmation without a name is, in one conditional write that a concurrent upgrade or
   * time step cannot be lost to (whichever loses, the next read sees the winner's item).
   */
  private async upgradeSingleFactor(subject: string, item: Record<string, unknown>): Promise<void> {
    const factor: StoredFactor = { name: DEFAULT_FACTOR_NAME, sealed_secret: item.sealed_secret as string, time_step: item.time_step as number, created_at: item.confirmed_at as string };
    await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: this.key(subject),
      UpdateExpression: 'SET factors = :factors, factor_count = :one REMOVE sealed_secret, time_step, confirmed_at',
      ConditionExpression: 'attribute_not_exists(factors) AND time_step = :step',
      ExpressionAttributeValues: { ':factors': { [LEGACY_FACTOR_ID]: factor }, ':one': 1, ':step': factor.time_step },
    })));
  }

  createTotpFactor(subject: string, input: { accountId: string; factor: TotpFactor; recoveryCodeHashes: readonly string[] }): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new PutCommand({
      TableName: this.table,
      Item: {
        ...this.key(subject),
        account_id: input.accountId,
        factors: { [input.factor.id]: toStored(input.factor) },
        factor_count: 1,
        // DynamoDB has no empty sets; an absent attribute means no codes left.
        recovery_code_hashes: input.recoveryCodeHashes.length > 0 ? new Set(input.recoveryCodeHashes) : undefined,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    })));
  }

  addTotpFactor(subject: string, factor: TotpFactor, max: number): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: this.key(subject),
      UpdateExpression: 'SET factors.#id = :factor ADD factor_count :one',
      // False for a missing item too (a user whose last factor was just removed), so this never creates one.
      ConditionExpression: 'factor_count < :max AND attribute_not_exists(factors.#id)',
      ExpressionAttributeNames: { '#id': factor.id },
      ExpressionAttributeValues: { ':factor': toStored(factor), ':one': 1, ':max': max },
    })));
  }

  async advanceTimeStep(subject: string, input: { factorId: string; timeStep: number; usedAt: string }): Promise<boolean> {
    const spend = randomUUID();
    const names = { '#id': input.factorId };
    const written = await ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: this.key(subject),
      UpdateExpression: 'SET factors.#id.time_step = :step, factors.#id.last_used_at = :used, factors.#id.spent_by = :spend',
      // The check and the record in one write: a code's step is accepted once, and only after the stored one.
      ConditionExpression: 'factors.#id.time_step < :step',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':step': input.timeStep, ':used': input.usedAt, ':spend': spend },
    })));
    if (written) return true;
    // The SDK retries a write whose answer was lost (a reset connection, a 500) and the retry then
    // fails its condition against our own first write: a code spent and its proof never answered.
    // `spent_by` tells our write from another request's.
    const { Item } = await this.client.send(new GetCommand({
      TableName: this.table, Key: this.key(subject), ProjectionExpression: 'factors.#id', ExpressionAttributeNames: names, ConsistentRead: true,
    }));
    const stored = (Item?.factors as Record<string, StoredFactor & { spent_by?: string }> | undefined)?.[input.factorId];
    return stored?.time_step === input.timeStep && stored.spent_by === spend;
  }

  async removeFactor(subject: string, factorId: string): Promise<boolean> {
    for (let round = 0; round < MAX_REMOVE_ROUNDS; round++) {
      const record = await this.getMfa(subject);
      if (!record?.factors.some((factor) => factor.id === factorId)) return false;
      const names = { '#id': factorId };
      const removed = record.factors.length === 1
        // The last factor: the item goes, and the recovery codes with it.
        ? await ifConditionHolds(() => this.client.send(new DeleteCommand({
          TableName: this.table, Key: this.key(subject),
          ConditionExpression: 'attribute_exists(factors.#id) AND factor_count = :one',
          ExpressionAttributeNames: names, ExpressionAttributeValues: { ':one': 1 },
        })))
        : await ifConditionHolds(() => this.client.send(new UpdateCommand({
          TableName: this.table, Key: this.key(subject),
          UpdateExpression: 'REMOVE factors.#id ADD factor_count :minusOne',
          ConditionExpression: 'attribute_exists(factors.#id) AND factor_count > :one',
          ExpressionAttributeNames: names, ExpressionAttributeValues: { ':one': 1, ':minusOne': -1 },
        })));
      if (removed) return true;
      // A concurrent change (another removal, an addition) came between the read and the write.
    }
    throw new Error('factor removal lost every round to concurrent changes');
  }

  async removeAll(subject: string): Promise<boolean> {
    const { Attributes } = await this.client.send(new DeleteCommand({ TableName: this.table, Key: this.key(subject), ReturnValues: 'ALL_OLD' }));
    return Attributes !== undefined;
  }

  replaceRecoveryCodes(subject: string, codeHashes: readonly string[]): Promise<boolean> {
    return ifConditionHolds(() => this.client.send(new UpdateCommand({
      TableName: this.table,
      Key: this.key(subject),
      UpdateExpression: 'SET recovery_code_hashes = :codes',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':codes': new Set(codeHashes) },
    })));
  }

  async hasRecoveryCode(subject: string, codeHash: string): Promise<boolean> {
    const { Item } = await this.client.send(new GetCommand({
      TableName: this.table, Key: this.key(subject), ProjectionExpression: 'recovery_code_hashes', ConsistentRead: true,
    }));
    return (Item?.recovery_code_hashes as Set<string> | undefined)?.has(codeHash) ?? false;
  }

  async consumeRecoveryCode(subject: string, codeHash: string): Promise<number | undefined> {
    const spend = randomUUID();
    let left: Set<string> | undefined;
    const consumed = await ifConditionHolds(async () => {
      const { Attributes } = await this.client.send(new UpdateCommand({
        TableName: this.table,
        Key: this.key(subject),
        UpdateExpression: 'DELETE recovery_code_hashes :consumed SET last_recovery_spend = :spend',
        // False for a missing item too, so this never creates one.
        ConditionExpression: 'contains(recovery_code_hashes, :hash)',
        ExpressionAttributeValues: { ':consumed': new Set([codeHash]), ':hash': codeHash, ':spend': spend },
        ReturnValues: 'UPDATED_NEW',
      }));
      left = Attributes?.recovery_code_hashes as Set<string> | undefined;
    });
    if (consumed) return left?.size ?? 0;
    // As for a time step: a retried write that lost its answer fails against our own first write.
    const { Item } = await this.client.send(new GetCommand({
      TableName: this.table, Key: this.key(subject), ProjectionExpression: 'last_recovery_spend, recovery_code_hashes', ConsistentRead: true,
    }));
    return Item?.last_recovery_spend === spend ? (Item.recovery_code_hashes as Set<string> | undefined)?.size ?? 0 : undefined;
  }
}
