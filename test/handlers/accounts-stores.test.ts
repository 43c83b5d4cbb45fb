import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoAttemptStore } from '../../functions/adapters/aws/dynamo-attempt-store.js';
import { DynamoMfaStore } from '../../functions/adapters/aws/dynamo-mfa-store.js';
import type { TotpFactor } from '../../functions/domain/accounts/index.js';
import { useEngines } from '../support/engines.js';

const NOW = 1_750_000_000_000;
const WINDOW_MS = 900_000;

const local = useEngines();
let table: string;
let mfa: DynamoMfaStore;
let attempts: DynamoAttemptStore;

beforeAll(() => {
  table = local.engines.env.ACCOUNTS_TABLE!;
  mfa = new DynamoMfaStore(local.dynamo, table);
  attempts = new DynamoAttemptStore(local.dynamo, table);
});

let users = 0;
const newUser = () => `store-user-${++users}`;

const factor = (overrides: Partial<TotpFactor> & { recoveryCodeHashes?: string[] } = {}) => {
  const { recoveryCodeHashes = ['h1', 'h2', 'h3'], ...rest } = overrides;
  const stored: TotpFactor = { id: 'f1', name: 'Phone', sealedSecret: 'local:v1:sealed', timeStep: 58_333_333, createdAt: new Date(NOW).toISOString(), ...rest };
  return { accountId: 'acct-1', factor: stored, recoveryCodeHashes };
};

const claim = (subject: string, overrides: { slot?: number; reservation?: string; attemptedAtMs?: number } = {}) => {
  const attemptedAtMs = overrides.attemptedAtMs ?? NOW;
  return attempts.claimSlot({
    subject,
    bucket: 'totp',
    slot: overrides.slot ?? 0,
    reservation: overrides.reservation ?? 'r1',
    attemptedAtMs,
    freeIfAttemptedAtOrBeforeMs: attemptedAtMs - WINDOW_MS,
    expiresAt: Math.ceil((attemptedAtMs + WINDOW_MS) / 1000),
  });
};

describe('DynamoMfaStore', () => {
  it('hasTotpFactor is false for a user with only attempt items', async () => {
    const sub = newUser();
    await claim(sub);
    expect(await mfa.hasTotpFactor(sub)).toBe(false);
  });

  it('createTotpFactor stores once and then answers false, leaving the first factor as it was', async () => {
    const sub = newUser();
    expect(await mfa.createTotpFactor(sub, factor())).toBe(true);
    expect(await mfa.createTotpFactor(sub, factor({ sealedSecret: 'other', recoveryCodeHashes: ['x'] }))).toBe(false);
    const { Item } = await local.dynamo.send(new GetCommand({ TableName: table, Key: { pk: `USER#${sub}`, sk: 'MFA#TOTP' } }));
    expect(Item).toMatchObject({ factors: { f1: { sealed_secret: 'local:v1:sealed', time_step: 58_333_333 } }, recovery_code_hashes: new Set(['h1', 'h2', 'h3']) });
  });

  it('consumeRecoveryCode counts down to 0 and then finds nothing', async () => {
    const sub = newUser();
    await mfa.createTotpFactor(sub, factor({ recoveryCodeHashes: ['h1', 'h2'] }));
    expect(await mfa.consumeRecoveryCode(sub, 'h1')).toBe(1);
    expect(await mfa.consumeRecoveryCode(sub, 'h2')).toBe(0);
    expect(await mfa.consumeRecoveryCode(sub, 'h2')).toBeUndefined();
  });

  it('consumeRecoveryCode finds nothing for a user without a factor, and creates nothing', async () => {
    const sub = newUser();
    expect(await mfa.consumeRecoveryCode(sub, 'h1')).toBeUndefined();
    expect(await mfa.hasTotpFactor(sub)).toBe(false);
  });
});

describe('DynamoMfaStore: factors', () => {
  const second = (id: string): TotpFactor => ({ id, name: id, sealedSecret: 's', timeStep: 1, createdAt: new Date(NOW).toISOString() });

  it('advanceTimeStep accepts only a later step, once: of concurrent writes with one step exactly one holds', async () => {
    const sub = newUser();
    await mfa.createTotpFactor(sub, factor());
    expect(await mfa.advanceTimeStep(sub, { factorId: 'f1', timeStep: 58_333_333, usedAt: 'x' })).toBe(false);
    const results = await Promise.all(Array.from({ length: 5 }, () => mfa.advanceTimeStep(sub, { factorId: 'f1', timeStep: 58_333_334, usedAt: 't' })));
    expect(results.filter(Boolean)).toHaveLength(1);
    const record = await mfa.getMfa(sub);
    expect(record!.factors[0]).toMatchObject({ id: 'f1', timeStep: 58_333_334, lastUsedAt: 't' });
  });

  it('advanceTimeStep refuses an unknown factor and creates nothing', async () => {
    const sub = newUser();
    expect(await mfa.advanceTimeStep(sub, { factorId: 'f1', timeStep: 9, usedAt: 't' })).toBe(false);
    expect(await mfa.hasTotpFactor(sub)).toBe(false);
  });

  it('addTotpFactor stops at the limit and never creates a record', async () => {
    const sub = newUser();
    expect(await mfa.addTotpFactor(sub, second('f2'), 10)).toBe(false);
    await mfa.createTotpFactor(sub, factor());
    expect(await mfa.addTotpFactor(sub, second('f2'), 2)).toBe(true);
    expect(await mfa.addTotpFactor(sub, second('f3'), 2)).toBe(false);
    expect((await mfa.getMfa(sub))!.factors.map((f) => f.id).sort()).toEqual(['f1', 'f2']);
  });

  it('removeFactor removes one; the last takes the recovery codes with it', async () => {
    const sub = newUser();
    await mfa.createTotpFactor(sub, factor());
    await mfa.addTotpFactor(sub, second('f2'), 10);
    expect(await mfa.removeFactor(sub, 'f1')).toBe(true);
    expect(await mfa.getMfa(sub)).toMatchObject({ accountId: 'acct-1', recoveryCodesLeft: 3 });
    expect(await mfa.removeFactor(sub, 'f1')).toBe(false);
    expect(await mfa.removeFactor(sub, 'f2')).toBe(true);
    expect(await mfa.getMfa(sub)).toBeUndefined();
    expect(await mfa.consumeRecoveryCode(sub, 'h1')).toBeUndefined();
  });

  it('replaceRecoveryCodes swaps the whole set in one write, and needs a factor', async () => {
    const sub = newUser();
    expect(await mfa.replaceRecoveryCodes(sub, ['n1'])).toBe(false);
    await mfa.createTotpFactor(sub, factor());
    expect(await mfa.replaceRecoveryCodes(sub, ['n1', 'n2'])).toBe(true);
    expect(await mfa.consumeRecoveryCode(sub, 'h1')).toBeUndefined();
    expect(await mfa.consumeRecoveryCode(sub, 'n1')).toBe(1);
  });
});

describe('DynamoMfaStore: an item from before several factors', () => {
  it('reads its one factor as the factor "totp", upgraded in place, whose time step then advances as any other', async () => {
    const sub = newUser();
    await local.dynamo.send(new PutCommand({
      TableName: table,
      Item: { pk: `USER#${sub}`, sk: 'MFA#TOTP', sealed_secret: 'local:v1:old', time_step: 100, confirmed_at: '2025-01-01T00:00:00.000Z', recovery_code_hashes: new Set(['h1']) },
    }));
    expect(await mfa.getMfa(sub)).toEqual({
      accountId: sub, recoveryCodesLeft: 1,
      factors: [{ id: 'totp', name: 'Authenticator', sealedSecret: 'local:v1:old', timeStep: 100, createdAt: '2025-01-01T00:00:00.000Z' }],
    });
    expect(await mfa.advanceTimeStep(sub, { factorId: 'totp', timeStep: 101, usedAt: 't' })).toBe(true);
    const { Item } = await local.dynamo.send(new GetCommand({ TableName: table, Key: { pk: `USER#${sub}`, sk: 'MFA#TOTP' } }));
    expect(Item).not.toHaveProperty('sealed_secret');
    expect(await mfa.removeFactor(sub, 'totp')).toBe(true);
    expect(await mfa.hasTotpFactor(sub)).toBe(false);
  });
});

describe('DynamoAttemptStore', () => {
  it('claimSlot refuses a slot claimed within the window', async () => {
    const sub = newUser();
    expect(await claim(sub, { reservation: 'r1' })).toBe(true);
    expect(await claim(sub, { reservation: 'r2', attemptedAtMs: NOW + WINDOW_MS - 1 })).toBe(false);
  });

  it('claimSlot takes a slot whose claim is exactly one window old', async () => {
    const sub = newUser();
    await claim(sub, { reservation: 'r1' });
    expect(await claim(sub, { reservation: 'r2', attemptedAtMs: NOW + WINDOW_MS })).toBe(true);
    expect(await attempts.listSlots(sub, 'totp')).toEqual([{ slot: 0, attemptedAtMs: NOW + WINDOW_MS }]);
  });

  it('claimSlot writes the TTL attribute expires_at', async () => {
    const sub = newUser();
    await claim(sub);
    const { Item } = await local.dynamo.send(new GetCommand({ TableName: table, Key: { pk: `USER#${sub}`, sk: 'ATTEMPT#totp#0' } }));
    expect(Item!.expires_at).toBe((NOW + WINDOW_MS) / 1000);
  });

  it('releaseSlot frees the slot its reservation holds', async () => {
    const sub = newUser();
    await claim(sub, { reservation: 'r1' });
    await attempts.releaseSlot({ subject: sub, bucket: 'totp', slot: 0, reservation: 'r1' });
    expect(await attempts.listSlots(sub, 'totp')).toEqual([]);
  });

  it('releaseSlot leaves a slot that another reservation has claimed since', async () => {
    const sub = newUser();
    await claim(sub, { reservation: 'r1' });
    await claim(sub, { reservation: 'r2', attemptedAtMs: NOW + WINDOW_MS });
    await attempts.releaseSlot({ subject: sub, bucket: 'totp', slot: 0, reservation: 'r1' });
    expect(await attempts.listSlots(sub, 'totp')).toHaveLength(1);
  });

  it('listSlots lists only the asked bucket, with slot numbers', async () => {
    const sub = newUser();
    await claim(sub, { slot: 3 });
    await attempts.claimSlot({ subject: sub, bucket: 'recovery', slot: 1, reservation: 'r', attemptedAtMs: NOW, freeIfAttemptedAtOrBeforeMs: 0, expiresAt: 1 });
    expect(await attempts.listSlots(sub, 'totp')).toEqual([{ slot: 3, attemptedAtMs: NOW }]);
  });
});

describe('DynamoMfaStore: a spend whose answer was lost and that the SDK sent again', () => {
  /**
   * The client as the SDK behaves when an UpdateItem's answer is lost (a reset connection, a 500
   * after the write): the write lands, and the retry then meets our own write's effect.
   */
  function answerLostOnce(): typeof local.dynamo {
    let lost = false;
    return new Proxy(local.dynamo, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async (command: { constructor: { name: string } }) => {
          if (!lost && command.constructor.name === 'UpdateCommand') {
            lost = true;
            await target.send(command as never);
          }
          return target.send(command as never);
        };
      },
    });
  }

  it('advanceTimeStep still answers true for its own step, and false for another request\'s', async () => {
    const sub = newUser();
    await mfa.createTotpFactor(sub, factor());
    const retried = new DynamoMfaStore(answerLostOnce(), table);
    expect(await retried.advanceTimeStep(sub, { factorId: 'f1', timeStep: 58_333_334, usedAt: new Date(NOW).toISOString() })).toBe(true);
    expect(await retried.advanceTimeStep(sub, { factorId: 'f1', timeStep: 58_333_334, usedAt: new Date(NOW).toISOString() })).toBe(false);
    expect((await mfa.getMfa(sub))!.factors[0]!.timeStep).toBe(58_333_334);
  });

  it('consumeRecoveryCode still answers what remains for its own code, and undefined for a code used before', async () => {
    const sub = newUser();
    await mfa.createTotpFactor(sub, factor({ recoveryCodeHashes: ['h1', 'h2', 'h3'] }));
    const retried = new DynamoMfaStore(answerLostOnce(), table);
    expect(await retried.consumeRecoveryCode(sub, 'h1')).toBe(2);
    expect(await retried.consumeRecoveryCode(sub, 'h1')).toBeUndefined();
    expect(await mfa.hasRecoveryCode(sub, 'h1')).toBe(false);
    expect(await mfa.hasRecoveryCode(sub, 'h2')).toBe(true);
  });
});

describe('DynamoMfaStore.hasRecoveryCode', () => {
  it('answers whether a hash is among the unused codes, without spending it; false for a user without a factor', async () => {
    const sub = newUser();
    await mfa.createTotpFactor(sub, factor({ recoveryCodeHashes: ['h1'] }));
    expect(await mfa.hasRecoveryCode(sub, 'h1')).toBe(true);
    expect(await mfa.hasRecoveryCode(sub, 'h1')).toBe(true);
    expect(await mfa.hasRecoveryCode(sub, 'h9')).toBe(false);
    expect(await mfa.consumeRecoveryCode(sub, 'h1')).toBe(0);
    expect(await mfa.hasRecoveryCode(sub, 'h1')).toBe(false);
    expect(await mfa.hasRecoveryCode(newUser(), 'h1')).toBe(false);
  });
});

describe('DynamoAttemptStore: the day budget', () => {
  it('keeps the day\'s TOTP slots (totp_day) apart from the 15-minute ones, each freed by its own window', async () => {
    const sub = newUser();
    const DAY_MS = 86_400_000;
    await claim(sub, { slot: 0 });
    const day = (attemptedAtMs: number) => attempts.claimSlot({
      subject: sub, bucket: 'totp_day', slot: 0, reservation: `r${attemptedAtMs}`, attemptedAtMs,
      freeIfAttemptedAtOrBeforeMs: attemptedAtMs - DAY_MS, expiresAt: Math.ceil((attemptedAtMs + DAY_MS) / 1000),
    });
    expect(await day(NOW)).toBe(true);
    expect(await attempts.listSlots(sub, 'totp')).toEqual([{ slot: 0, attemptedAtMs: NOW }]);
    expect(await attempts.listSlots(sub, 'totp_day')).toEqual([{ slot: 0, attemptedAtMs: NOW }]);
    expect(await day(NOW + WINDOW_MS)).toBe(false); // 15 minutes free the short slot, not the day's
    expect(await day(NOW + DAY_MS - 1)).toBe(false);
    expect(await day(NOW + DAY_MS)).toBe(true);
  });
});
