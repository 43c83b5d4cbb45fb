import { describe, expect, it } from 'vitest';
import { LazyFlowRunner } from '../../functions/adapters/lazy-flow-runner.js';
import { onFirstUse, portOnFirstCall } from '../../functions/adapters/lazy.js';
import { LocalSecretBox } from '../../functions/adapters/local-secret-box.js';
import type { FlowRunner } from '../../functions/domain/flows/ports.js';
import type { SecretBox } from '../../functions/domain/secret-box.js';

/** A flow runner that records the options of each run and succeeds. */
function recordingRunner() {
  const runs: { flow: string; timeoutMs: number }[] = [];
  const runner: FlowRunner = {
    async run(flow, _input, options) {
      runs.push({ flow, timeoutMs: options.timeoutMs });
      return { status: 'succeeded', output: null };
    },
  };
  return { runner, runs };
}

describe('onFirstUse(load)', () => {
  it('loads once, on the first use, for any number of concurrent and later uses', async () => {
    let loads = 0;
    const client = onFirstUse(async () => ({ n: ++loads }));
    expect(loads).toBe(0);
    const first = await Promise.all([client(), client(), client()]);
    expect(await client()).toBe(first[0]);
    expect(new Set(first).size).toBe(1);
    expect(loads).toBe(1);
  });

  it('tries again after a load that failed, rather than failing every later use', async () => {
    let loads = 0;
    const client = onFirstUse(async () => {
      if (++loads === 1) throw new Error('first load fails');
      return 'loaded';
    });
    await expect(client()).rejects.toThrow('first load fails');
    expect(await client()).toBe('loaded');
    expect(loads).toBe(2);
  });
});

describe('portOnFirstCall(load, methods)', () => {
  it('loads nothing until a method is called, then forwards every call to one implementation', async () => {
    let loads = 0;
    const box = portOnFirstCall<SecretBox>(async () => {
      loads++;
      return new LocalSecretBox(Buffer.alloc(32, 7).toString('base64'));
    }, { seal: true, open: true });
    expect(loads).toBe(0);
    const sealed = await box.seal('whsec_secret', { trigger_id: 't1' });
    expect(await box.open(sealed, { trigger_id: 't1' })).toBe('whsec_secret');
    await expect(box.open(sealed, { trigger_id: 't2' })).rejects.toThrow();
    expect(loads).toBe(1);
  });
});

describe('LazyFlowRunner', () => {
  it('takes the time its first load took out of that run\'s wait, so the answer still beats the deadline', async () => {
    let now = 1_000;
    const { runner, runs } = recordingRunner();
    const lazy = new LazyFlowRunner(async () => {
      now += 180; // the Step Functions chunk and client take 180 ms to load
      return runner;
    }, () => now);
    await lazy.run('echo', '{}', { timeoutMs: 20_000 });
    await lazy.run('echo', '{}', { timeoutMs: 20_000 });
    expect(runs).toEqual([{ flow: 'echo', timeoutMs: 19_820 }, { flow: 'echo', timeoutMs: 20_000 }]);
  });

  it('passes a whole, never negative, number of milliseconds (AbortSignal.timeout takes no other)', async () => {
    let now = 0;
    const { runner, runs } = recordingRunner();
    const lazy = new LazyFlowRunner(async () => {
      now += 0.4;
      return runner;
    }, () => now);
    await lazy.run('echo', '{}', { timeoutMs: 100 });
    const slow = new LazyFlowRunner(async () => {
      now += 500;
      return runner;
    }, () => now);
    await slow.run('echo', '{}', { timeoutMs: 100 });
    expect(runs.map((r) => r.timeoutMs)).toEqual([99, 0]);
  });
});
