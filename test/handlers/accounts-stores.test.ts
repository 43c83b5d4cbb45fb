import { GetCommand } from '@aws-sdk/lib-dynamodb';
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

const factor = (overrides: Partial<TotpFactor> = {}): TotpFactor => ({
  sealedSecret: 'local:v1:sealed',
  timeStep: 58_333_333,
  confirmedAt: new Date(NOW).toISOString(),
  recoveryCodeHashes: ['h1', 'h2', 'h3'],
  ...overrides,
});

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
    expect(Item).toMatchObject({ sealed_secret: 'local:v1:sealed', time_step: 58_333_333, recovery_code_hashes: new Set(['h1', 'h2', 'h3']) });
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
