import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FLOW_WORKER_MAX_CONCURRENCY } from '../../lib/config.js';

const deploying = readFileSync(resolve(import.meta.dirname, '../../docs/deploying.md'), 'utf8');

describe('docs/deploying.md', () => {
  it(`warns that the flow worker may run ${DEFAULT_FLOW_WORKER_MAX_CONCURRENCY} at once where a new account allows 10, and shows how to set flowWorkerMaxConcurrency below the limit`, () => {
    expect(deploying).toContain("**A new account's Lambda concurrency.**");
    expect(deploying).toContain(`(default ${DEFAULT_FLOW_WORKER_MAX_CONCURRENCY})`);
    expect(deploying).toContain('as low as 10');
    expect(deploying).toContain('aws lambda get-account-settings --query AccountLimit.ConcurrentExecutions');
    expect(deploying).toMatch(/npx cdk deploy -c flowWorkerMaxConcurrency=\d+/);
  });
});
