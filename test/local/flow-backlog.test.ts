import { describe, expect, it } from 'vitest';
import { FlowBacklog } from '../../local/flow-backlog.js';

describe('the local stack\'s flow backlog ledger', () => {
  it('counts what was sent and not yet settled, with the oldest one\'s age', () => {
    let now = 1_000_000;
    const backlog = new FlowBacklog(() => now);
    backlog.sent('a');
    now += 2_000;
    backlog.sent('b');
    now += 1_500;
    expect(backlog.read()).toEqual({ waiting: 2, oldest_age_seconds: 3 });
    backlog.done('a');
    expect(backlog.read()).toEqual({ waiting: 1, oldest_age_seconds: 1 });
    backlog.done('b');
    expect(backlog.read()).toEqual({ waiting: 0, oldest_age_seconds: null });
  });

  it('a message the worker thread settles before its send is noted never waits', () => {
    const backlog = new FlowBacklog(() => 0);
    backlog.done('early');
    backlog.sent('early');
    expect(backlog.read()).toEqual({ waiting: 0, oldest_age_seconds: null });
    // A later message with another id still counts.
    backlog.sent('later');
    expect(backlog.read().waiting).toBe(1);
  });
});
