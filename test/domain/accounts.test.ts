import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateLocalSigningKey, LocalTokenSigner } from '../../functions/adapters/local-token-signer.js';
import { ATTEMPT_LIMITS, MAX_DAILY_TOTP_FAILURES, withAttemptBudget } from '../../functions/domain/accounts/attempt-budget.js';
import { requireFreshProof, stepUpProof } from '../../functions/domain/accounts/step-up.js';
import { confirmRegistration } from '../../functions/domain/accounts/confirm-registration.js';
import {
  createAccountUseCases,
  totpAccountName,
  type AccountsDeps,
  type AttemptBucket,
  type AttemptSlot,
  type AttemptStore,
} from '../../functions/domain/accounts/index.js';
import { startRegistration } from '../../functions/domain/accounts/start-registration.js';
import { verifyRecoveryCode } from '../../functions/domain/accounts/verify-recovery-code.js';
import { AppError } from '../../functions/shared/errors.js';

const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // "12345678901234567890"
const SECRET_16_BYTES = 'GEZDGNBVGY3TQOJQGEZDGNBVGY';
const SECRET_15_BYTES = 'GEZDGNBVGY3TQOJQGEZDGNBV';
const NOW = 1_750_000_000_000;

/** A dependency that fails the test if anything is read from or written to it. */
function untouchable<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get(_, property) {
      throw new Error(`${name}.${String(property)} was used`);
    },
  });
}

const untouchedDeps = () => ({
  mfa: untouchable<AccountsDeps['mfa']>('mfa'),
  attempts: untouchable<AttemptStore>('attempts'),
  secretBox: untouchable<AccountsDeps['secretBox']>('secretBox'),
  events: untouchable<AccountsDeps['events']>('events'),
  signer: untouchable<AccountsDeps['signer']>('signer'),
  proofs: untouchable<AccountsDeps['proofs']>('proofs'),
  keys: untouchable<AccountsDeps['keys']>('keys'),
  keyEvents: untouchable<AccountsDeps['keyEvents']>('keyEvents'),
  tokenIssuer: 'https://gateway.example',
  now: () => NOW,
  randomBytes,
});
const client = {};

describe('confirmRegistration refuses malformed input before any storage or attempt', () => {
  const refuse = (input: { code: string; secret: string }) =>
    expect(confirmRegistration(untouchedDeps(), { subject: 'alice', accountId: 'alice', client, ...input })).rejects.toMatchObject({
      code: 'validation_error',
    });

  it.each(['12345', '1234567', '12a456', ' 123456', '１２３４５６', ''])('the code %j', (code) =>
    refuse({ code, secret: RFC_SECRET }),
  );
  it('a secret with a character outside base32', () => refuse({ code: '123456', secret: 'GEZDGNBVGY3TQOJQ1EZDGNBVGY' }));
  it('a secret of 15 bytes', () => refuse({ code: '123456', secret: SECRET_15_BYTES }));
  it('a secret with wrong padding', () => refuse({ code: '123456', secret: `${SECRET_16_BYTES}==` }));
  it('an empty secret', () => refuse({ code: '123456', secret: '' }));
});

describe('verifyRecoveryCode', () => {
  it('answers invalid_code for a string not in recovery-code form without spending an attempt', async () => {
    await expect(
      verifyRecoveryCode(untouchedDeps(), { subject: 'alice', accountId: 'alice', client, code: 'not a code' }),
    ).rejects.toMatchObject({ code: 'invalid_code' });
  });
});

describe('startRegistration', () => {
  const noFactor = { hasTotpFactor: async () => false };

  it('encodes 20 bytes of the injected source as the secret and puts it in the URI', async () => {
    const started = await startRegistration(
      { ...untouchedDeps(), mfa: noFactor, randomBytes: () => Buffer.from('12345678901234567890'), issuer: 'Flowgate' },
      { subject: 'alice', client },
    );
    expect(started).toEqual({
      secret: RFC_SECRET,
      otpauthUri: `otpauth://totp/Flowgate:alice?secret=${RFC_SECRET}&issuer=Flowgate&algorithm=SHA1&digits=6&period=30`,
    });
  });

  it('refuses a user who already has a factor with already_registered', async () => {
    const deps = { ...untouchedDeps(), mfa: { hasTotpFactor: async () => true }, randomBytes, issuer: 'Flowgate' };
    await expect(startRegistration(deps, { subject: 'alice', client })).rejects.toMatchObject({ code: 'already_registered' });
  });

  it('shows colons of the subject as underscores, so apps do not split the label there', async () => {
    const started = await startRegistration({ ...untouchedDeps(), mfa: noFactor, randomBytes, issuer: 'Flowgate' }, { subject: 'urn:idp:42', client });
    expect(started.otpauthUri).toContain('/Flowgate:urn_idp_42?');
  });
});

describe('totpAccountName', () => {
  it('keeps a subject without colons as it is', () => expect(totpAccountName('auth0|abc')).toBe('auth0|abc'));
});

describe('createAccountUseCases', () => {
  const deps = { ...untouchedDeps(), issuer: 'Flowgate' };
  it.each(['', 'Flow:gate'])('refuses the issuer %j at start-up', (issuer) => {
    expect(() => createAccountUseCases({ ...deps, issuer })).toThrow(TypeError);
  });
});

/**
 * An attempt store in memory, with hooks to play a concurrent attempt between read and claim. The
 * hooks and `slots` are the 15-minute TOTP bucket's (and the recovery bucket's); the ceiling across
 * budgets (`any`) is kept apart in `ceiling`, the day's TOTP failures in `daily`.
 */
class MemoryAttemptStore implements AttemptStore {
  readonly slots = new Map<number, AttemptSlot & { reservation: string }>();
  readonly ceiling = new Map<number, AttemptSlot & { reservation: string }>();
  readonly daily = new Map<number, AttemptSlot & { reservation: string }>();
  beforeClaim: (slot: number) => void = () => undefined;
  failRelease = false;

  private bucket(bucket: AttemptBucket = 'totp') {
    return bucket === 'any' ? this.ceiling : bucket === 'totp_day' ? this.daily : this.slots;
  }

  async listSlots(_subject?: string, bucket?: AttemptBucket): Promise<AttemptSlot[]> {
    return [...this.bucket(bucket).values()].map(({ slot, attemptedAtMs }) => ({ slot, attemptedAtMs }));
  }

  async claimSlot(input: Parameters<AttemptStore['claimSlot']>[0]): Promise<boolean> {
    const slots = this.bucket(input.bucket);
    if (input.bucket === 'totp' || input.bucket === 'recovery') this.beforeClaim(input.slot);
    const held = slots.get(input.slot);
    if (held && held.attemptedAtMs > input.freeIfAttemptedAtOrBeforeMs) return false;
    slots.set(input.slot, { slot: input.slot, attemptedAtMs: input.attemptedAtMs, reservation: input.reservation });
    return true;
  }

  async releaseSlot(input: { bucket: AttemptBucket; slot: number; reservation: string }): Promise<void> {
    if (this.failRelease) throw new Error('store unavailable');
    const slots = this.bucket(input.bucket);
    if (slots.get(input.slot)?.reservation === input.reservation) slots.delete(input.slot);
  }
}

describe('withAttemptBudget', () => {
  const key = { subject: 'alice', bucket: 'totp' as const, nowMs: NOW };
  const wrongCode = async () => {
    throw new AppError('invalid_code');
  };

  it('keeps the slot claimed when the check finds a wrong code', async () => {
    const attempts = new MemoryAttemptStore();
    await expect(withAttemptBudget({ attempts, randomBytes }, key, wrongCode)).rejects.toMatchObject({ code: 'invalid_code' });
    expect(await attempts.listSlots()).toEqual([{ slot: 0, attemptedAtMs: NOW }]);
    expect(await attempts.listSlots('alice', 'any')).toEqual([{ slot: 0, attemptedAtMs: NOW }]);
  });

  it('gives the slot back when the check succeeds', async () => {
    const attempts = new MemoryAttemptStore();
    await expect(withAttemptBudget({ attempts, randomBytes }, key, async () => 'ok')).resolves.toBe('ok');
    expect(attempts.slots.size).toBe(0);
    expect(attempts.ceiling.size).toBe(0);
  });

  it('gives the slot back when the check fails for another reason than a wrong code', async () => {
    const attempts = new MemoryAttemptStore();
    const conflict = async () => {
      throw new AppError('already_registered');
    };
    await expect(withAttemptBudget({ attempts, randomBytes }, key, conflict)).rejects.toMatchObject({ code: 'already_registered' });
    expect(attempts.slots.size).toBe(0);
  });

  it('still answers the success when giving the slot back fails', async () => {
    const attempts = new MemoryAttemptStore();
    attempts.failRelease = true;
    await expect(withAttemptBudget({ attempts, randomBytes }, key, async () => 'ok')).resolves.toBe('ok');
  });

  it('moves on to the next free slot when a concurrent attempt claims the one it read as free', async () => {
    const attempts = new MemoryAttemptStore();
    attempts.beforeClaim = (slot) => {
      if (slot === 0 && !attempts.slots.has(0)) attempts.slots.set(0, { slot: 0, attemptedAtMs: NOW, reservation: 'other' });
    };
    await expect(withAttemptBudget({ attempts, randomBytes }, key, wrongCode)).rejects.toMatchObject({ code: 'invalid_code' });
    expect([...attempts.slots.keys()].sort()).toEqual([0, 1]);
  });

  it('answers 429 when concurrent attempts take every slot it reads as free', async () => {
    const attempts = new MemoryAttemptStore();
    let check = 0;
    attempts.beforeClaim = (slot) => {
      attempts.slots.set(slot, { slot, attemptedAtMs: NOW - 900_000 + 1 + check++, reservation: 'other' });
    };
    // Every claim is lost, and each round re-reads five busy slots: blocked until the oldest leaves.
    const error = await withAttemptBudget({ attempts, randomBytes }, key, wrongCode).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'too_many_attempts', headers: { 'retry-after': '1' } });
  });

  it('gives up with 429 after a bounded number of rounds when every claim keeps losing', async () => {
    let claims = 0;
    const attempts: AttemptStore = {
      listSlots: async () => [], // others claim and give back faster than this attempt reads
      claimSlot: async () => (claims++, false),
      releaseSlot: async () => undefined,
    };
    const error = await withAttemptBudget({ attempts, randomBytes }, key, wrongCode).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'too_many_attempts', headers: { 'retry-after': '1' } });
    expect(claims).toBe(6 * 5);
  });

  it('does not run the check when the budget is spent', async () => {
    const attempts = new MemoryAttemptStore();
    for (let slot = 0; slot < 5; slot++) attempts.slots.set(slot, { slot, attemptedAtMs: NOW - 100_000, reservation: 'r' });
    let ran = false;
    const error = await withAttemptBudget({ attempts, randomBytes }, key, async () => (ran = true)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'too_many_attempts', headers: { 'retry-after': '800' } });
    expect(ran).toBe(false);
  });

  it('refuses with 429 when the ceiling across budgets is spent, and gives its own slot back', async () => {
    const attempts = new MemoryAttemptStore();
    for (let slot = 0; slot < 8; slot++) attempts.ceiling.set(slot, { slot, attemptedAtMs: NOW - 100_000, reservation: 'r' });
    let ran = false;
    const error = await withAttemptBudget({ attempts, randomBytes }, key, async () => (ran = true)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'too_many_attempts' });
    expect(ran).toBe(false);
    expect(attempts.slots.size).toBe(0);
  });

  it('lets a bucket with room through while the ceiling has room: 5 TOTP failures leave 3 across both', async () => {
    const attempts = new MemoryAttemptStore();
    for (let slot = 0; slot < 5; slot++) attempts.ceiling.set(slot, { slot, attemptedAtMs: NOW - 100_000, reservation: 'r' });
    await expect(withAttemptBudget({ attempts, randomBytes }, { ...key, bucket: 'recovery' }, async () => 'ok')).resolves.toBe('ok');
  });
});

describe('withAttemptBudget escalates TOTP lock-outs to a day (fake clock)', () => {
  const MINUTE = 60_000;
  const HOUR = 60 * MINUTE;
  const totp = (nowMs: number) => ({ subject: 'alice', bucket: 'totp' as const, nowMs });
  const recovery = (nowMs: number) => ({ subject: 'alice', bucket: 'recovery' as const, nowMs });
  const wrongCode = async () => {
    throw new AppError('invalid_code');
  };

  /** Four lock-outs of 15 minutes: 5 wrong codes at NOW, +15, +30 and +45 minutes (20 failures). */
  async function fourLockOuts(attempts: AttemptStore) {
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 5; i++) {
        await expect(withAttemptBudget({ attempts, randomBytes }, totp(NOW + round * 15 * MINUTE), wrongCode)).rejects.toMatchObject({ code: 'invalid_code' });
      }
    }
  }

  it('allows 20 failures a day and states the budgets', () => {
    expect(MAX_DAILY_TOTP_FAILURES).toBe(20);
    expect(ATTEMPT_LIMITS.totp_day).toEqual({ maxFailures: 20, windowSeconds: 86_400 });
  });

  it('refuses the 21st failure in a day even after the 15-minute window, until the first failure is a day old', async () => {
    const attempts = new MemoryAttemptStore();
    await fourLockOuts(attempts);
    let ran = false;
    const at = NOW + HOUR; // the last five failures are 15 minutes old: the 15-minute budget is free
    const error = await withAttemptBudget({ attempts, randomBytes }, totp(at), async () => (ran = true)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'too_many_attempts', headers: { 'retry-after': String(23 * 3600) } });
    expect(ran).toBe(false);
    // Still refused at the last millisecond of the day, and a right code is refused alike.
    const late = await withAttemptBudget({ attempts, randomBytes }, totp(NOW + 24 * HOUR - 1), async () => 'ok').catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'too_many_attempts', headers: { 'retry-after': '1' } });
  });

  it('resets as documented: each failure stops counting a day after it, so five more come free at NOW + 24 h', async () => {
    const attempts = new MemoryAttemptStore();
    await fourLockOuts(attempts);
    for (let i = 0; i < 5; i++) {
      await expect(withAttemptBudget({ attempts, randomBytes }, totp(NOW + 24 * HOUR), wrongCode)).rejects.toMatchObject({ code: 'invalid_code' });
    }
    // The budget is full again (the failures of NOW + 15 min still count): the next ones free at NOW + 24 h 15 min.
    const error = await withAttemptBudget({ attempts, randomBytes }, totp(NOW + 24 * HOUR + 15 * MINUTE - 1), async () => 'ok').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'too_many_attempts', headers: { 'retry-after': '1' } });
    await expect(withAttemptBudget({ attempts, randomBytes }, totp(NOW + 24 * HOUR + 15 * MINUTE), async () => 'ok')).resolves.toBe('ok');
  });

  it('gives nothing back for a success: the real user signing in does not refill an attacker\'s day', async () => {
    const attempts = new MemoryAttemptStore();
    for (let round = 0; round < 4; round++) {
      const at = NOW + round * 15 * MINUTE;
      await expect(withAttemptBudget({ attempts, randomBytes }, totp(at), async () => 'signed in')).resolves.toBe('signed in');
      for (let i = 0; i < 5; i++) await expect(withAttemptBudget({ attempts, randomBytes }, totp(at), wrongCode)).rejects.toMatchObject({ code: 'invalid_code' });
    }
    await expect(withAttemptBudget({ attempts, randomBytes }, totp(NOW + HOUR), async () => 'ok')).rejects.toMatchObject({ code: 'too_many_attempts' });
  });

  it('keeps recovery codes working while TOTP is locked for the day', async () => {
    const attempts = new MemoryAttemptStore();
    await fourLockOuts(attempts);
    await expect(withAttemptBudget({ attempts, randomBytes }, recovery(NOW + HOUR), async () => 'rescued')).resolves.toBe('rescued');
  });

  it('never escalates the recovery budget: 5 failures every 15 minutes for a whole day, and the next window is open', async () => {
    const attempts = new MemoryAttemptStore();
    for (let window = 0; window < 96; window++) {
      for (let i = 0; i < 5; i++) {
        await expect(withAttemptBudget({ attempts, randomBytes }, recovery(NOW + window * 15 * MINUTE), wrongCode)).rejects.toMatchObject({ code: 'invalid_code' });
      }
    }
    await expect(withAttemptBudget({ attempts, randomBytes }, recovery(NOW + 24 * HOUR), async () => 'rescued')).resolves.toBe('rescued');
  });

  it('answers the longest wait when both the 15-minute and the daily budget refuse, and claims nothing', async () => {
    const attempts = new MemoryAttemptStore();
    for (let slot = 0; slot < 20; slot++) attempts.daily.set(slot, { slot, attemptedAtMs: NOW - HOUR, reservation: 'r' });
    for (let slot = 0; slot < 5; slot++) attempts.slots.set(slot, { slot, attemptedAtMs: NOW - MINUTE, reservation: 'r' });
    const error = await withAttemptBudget({ attempts, randomBytes }, totp(NOW), async () => 'ok').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'too_many_attempts', headers: { 'retry-after': String(23 * 3600) } });
    expect(attempts.ceiling.size).toBe(0);
  });

  it('gives a burst of 30 concurrent wrong codes with the 15-minute budget free but one daily slot left exactly one check', async () => {
    const attempts = new MemoryAttemptStore();
    for (let slot = 0; slot < 19; slot++) attempts.daily.set(slot, { slot, attemptedAtMs: NOW - HOUR, reservation: 'r' });
    let checks = 0;
    const results = await Promise.all(Array.from({ length: 30 }, () =>
      withAttemptBudget({ attempts, randomBytes }, totp(NOW), async () => {
        checks++;
        throw new AppError('invalid_code');
      }).catch((e: AppError) => e.code)));
    expect(checks).toBe(1);
    expect(results.filter((code) => code === 'too_many_attempts')).toHaveLength(29);
  });
});

describe('requireFreshProof while the TOTP budget is locked', () => {
  const signer = new LocalTokenSigner([generateLocalSigningKey()]);
  const spentJtis = new Set<string>();
  const proofs = { spend: async ({ jti }: { jti: string }) => !spentJtis.has(jti) && Boolean(spentJtis.add(jti)) };
  const deps = (attempts: AttemptStore) => ({ attempts, randomBytes, signer, proofs, tokenIssuer: 'https://gateway.example', now: () => NOW });
  const purpose = 'regenerate_recovery_codes' as const;

  async function lockedForTheDay() {
    const attempts = new MemoryAttemptStore();
    for (let slot = 0; slot < 20; slot++) attempts.daily.set(slot, { slot, attemptedAtMs: NOW - 60_000, reservation: 'r' });
    return attempts;
  }

  it('lets a proof that holds through: it took a code (a recovery code) to get, so it is no guess', async () => {
    const attempts = await lockedForTheDay();
    const { mfaToken } = await stepUpProof(deps(attempts), { subject: 'alice', accountId: 'alice', method: 'recovery_code', purpose });
    await expect(requireFreshProof(deps(attempts), { subject: 'alice', mfaToken, purposes: [purpose], spend: true })).resolves.toMatchObject({ purpose });
    // Spent, it no longer holds: a replay is a guess like any other, refused by the locked budget.
    await expect(requireFreshProof(deps(attempts), { subject: 'alice', mfaToken, purposes: [purpose], spend: true })).rejects.toMatchObject({ code: 'too_many_attempts' });
  });

  it('refuses a proof that does not hold with 429 while locked, as it refuses a code', async () => {
    const attempts = await lockedForTheDay();
    await expect(requireFreshProof(deps(attempts), { subject: 'alice', mfaToken: 'not.a.proof', purposes: [purpose], spend: true })).rejects.toMatchObject({ code: 'too_many_attempts' });
  });
});

describe('the MFA guide (docs/mfa.md) states the odds the budgets give', () => {
  const readme = readFileSync(new URL('../../docs/mfa.md', import.meta.url), 'utf8');
  const odds = (factors: number, guesses: number) => 1 - (1 - (3 * factors) / 1e6) ** guesses;
  /** "1 in N" as the guide rounds it: whole numbers, three significant figures past 1,000. */
  const oneIn = (p: number) => `1 in ${(1 / p >= 1000 ? Number((1 / p).toPrecision(3)) : Math.round(1 / p)).toLocaleString('en-US')}`;

  it('from the daily cap, the drift window and the factor limit', () => {
    const perDay = MAX_DAILY_TOTP_FAILURES;
    expect(readme).toContain(`At ${perDay} guesses a day (${perDay * 30} a month)`);
    expect(readme).toContain(`(${oneIn(odds(1, perDay))})`);
    expect(readme).toContain(`(${oneIn(odds(1, perDay * 30))})`);
    expect(readme).toContain(`(${oneIn(odds(10, perDay))})`);
    expect(readme).toContain(`(${oneIn(odds(10, perDay * 30))})`);
  });
});
