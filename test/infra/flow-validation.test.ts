import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkFlowDefinition } from '../../lib/flow-definition.js';
import { synth } from '../support/synth.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INVALID = resolve(ROOT, 'test/fixtures/flows-invalid');

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A flows folder holding the shipped `echo` flow and the given fixture, as a deployment would. */
function flowsWith(fixture: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'flowgate-flows-'));
  folders.push(dir);
  copyFileSync(resolve(ROOT, 'flows/echo.asl.json'), join(dir, 'echo.asl.json'));
  const file = join(dir, fixture);
  copyFileSync(join(INVALID, fixture), file);
  return { dir, file };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('flow definitions are checked when the stack synthesises, not when it deploys', () => {
  it.each([
    ['run-job-in-map.asl.json', '"Resize each" > iteration > "Resize"', 'arn:aws:states:::ecs:runTask.sync'],
    ['callback-in-parallel.asl.json', '"Both" > branch 2 > "Ask a human"', 'arn:aws:states:::sqs:sendMessage.waitForTaskToken'],
    ['child-flow-sync2-in-iterator.asl.json', '"Each" > iteration > "Child"', 'arn:aws:states:::states:startExecution.sync:2'],
  ])('%s: refuses what express state machines cannot run, naming the file and the nested state', (fixture, state, resource) => {
    const { dir, file } = flowsWith(fixture);
    expect(() => synth({}, { flowsDir: dir }).template).toThrow(new RegExp(`${escape(file)}: state ${escape(state)} uses ${escape(resource)}, which express state machines do not support`));
  });

  it.each([
    ['missing-next.asl.json', /MISSING_TRANSITION_TARGET: .*Finish/],
    ['unknown-state-type.asl.json', /SCHEMA_VALIDATION_FAILED: \/States\/Sleep\/Type is invalid/],
  ])('%s: refuses a definition that is not valid Amazon States Language, naming the file and the state', (fixture, problem) => {
    const { dir, file } = flowsWith(fixture);
    let message = '';
    try {
      synth({}, { flowsDir: dir }).template;
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`flow definition ${file} is not valid Amazon States Language`);
    expect(message).toMatch(problem);
  });

  it('checks the text as the file holds it: a ${...} substitution passes, the .sync beside it does not', () => {
    const { dir, file } = flowsWith('substitution-and-sync.asl.json');
    expect(() => synth({}, { flowsDir: dir }).template).toThrow(new RegExp(`${escape(file)}: state "Crawl" uses arn:aws:states:::glue:startJobRun\\.sync,`));

    // Without the suffix (Request Response, which express flows run) the check passes the flow as
    // written; the stack fills in substitutions when it declares them (DefinitionSubstitutions).
    const requestResponse = readFileSync(file, 'utf8').replace('glue:startJobRun.sync', 'glue:startJobRun');
    expect(() => checkFlowDefinition(file, requestResponse)).not.toThrow();
  });
});
