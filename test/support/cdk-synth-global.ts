import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the run's one `cdk synth` goes (test/support/cdk-synth-output.ts); nothing is synthesized until a file asks. */
    cdkSynthDir: string;
  }
}

/**
 * vitest's global setup: a folder shared by every worker of the run, for the one real `cdk synth`
 * that the files needing bundles share. Making the folder costs nothing; the synth runs only when
 * a test file first asks for it, so a run without those files never pays for it.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'flowgate-run-synth-'));
  project.provide('cdkSynthDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
