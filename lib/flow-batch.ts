import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flowFile, listFlowNames } from './flow-files.js';

/**
 * A flow's batch state machine: one express execution runs the flow for every event of a flow
 * worker batch. Step Functions bills an express execution $1 per million requests plus its
 * duration in 100 ms steps: a batch of nine runs for the price of one request and one 100 ms
 * step, where nine executions cost nine of each (about $0.98 per million webhooks of $5).
 *
 * The flow's own states run unchanged as the only branch of a Parallel state inside a Map over the
 * batch's inputs, so every event runs alone with its own input, as in its own execution, and a
 * failure of one is caught and answered for that event only:
 *
 *   { "items": [input, …] }  ──Map──▶  Parallel(flow) ──▶ { "output": … }
 *                                             └─ Catch ──▶ { "failure": { "Error": …, "Cause"?: … } }
 *
 * What no Catch can hold: `States.ALL` does not match `States.Runtime` (a path that does not
 * resolve) or `States.DataLimitExceeded` (a state's data over 256 KiB), which fail the whole
 * execution, and a batch can time out as a whole
 * (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html). The events
 * of such a batch may have run, or not: the worker sends each back through the queue to run alone.
 * So a flow gets a batch state machine only when running an event again is harmless: it has no
 * Task state (Pass, Choice, Wait, Succeed, Fail, and Parallel and Map of those only), or its
 * `<name>.batch.json` declares `{"safeToRunAgain": true, "reason": "…"}`.
 *
 * Only the execution differs: `$$.Execution` is the batch's. A flow that reads it, or sets what a
 * branch cannot hold (`QueryLanguage` at the top), gets no batch state machine, and its events
 * keep one execution each. The flow's `TimeoutSeconds` becomes the batch's.
 */
export const BATCH_STATE_NAMES = { map: 'FlowgateBatch', run: 'FlowgateBatchRun', failed: 'FlowgateBatchRunFailed' } as const;
/** What a flow definition may hold at its top level and still run as a branch. */
const BRANCH_KEYS = new Set(['StartAt', 'States', 'Comment']);
const TOP_ONLY_KEYS = new Set(['TimeoutSeconds', 'Version']);

/** What a flow's `<name>.batch.json` declares; without the file, nothing. */
export interface BatchDeclaration {
  /** Running one of its events again does no harm (its Tasks only read, or what they write or send is keyed by the event). */
  safeToRunAgain?: boolean;
}

export const FLOW_BATCH_SUFFIX = '.batch.json';

/**
 * The batch definition of a flow, or undefined when the flow must keep one execution per event:
 * it reads its execution, sets a top-level key a branch cannot hold, uses the wrapper's state
 * names, or has Task states and is not declared safe to run again.
 */
export function batchDefinitionOf(definition: string, declaration: BatchDeclaration = {}): string | undefined {
  if (definition.includes('$$.Execution')) return undefined;
  const flow = JSON.parse(definition) as Record<string, unknown>;
  if (Object.keys(flow).some((key) => !BRANCH_KEYS.has(key) && !TOP_ONLY_KEYS.has(key))) return undefined;
  const states = statesOf(flow.States);
  // State names are unique across a whole state machine, nested ones included.
  if (Object.values(BATCH_STATE_NAMES).some((name) => states.has(name))) return undefined;
  if (!declaration.safeToRunAgain && [...states.values()].some((state) => state?.Type === 'Task')) return undefined;
  const branch = Object.fromEntries(Object.entries(flow).filter(([key]) => BRANCH_KEYS.has(key)));
  return JSON.stringify({
    Comment: `Runs flow events in a batch, each alone: ${typeof flow.Comment === 'string' ? flow.Comment : ''}`.slice(0, 1000),
    ...(flow.Version !== undefined && { Version: flow.Version }),
    ...(flow.TimeoutSeconds !== undefined && { TimeoutSeconds: flow.TimeoutSeconds }),
    StartAt: BATCH_STATE_NAMES.map,
    States: {
      [BATCH_STATE_NAMES.map]: {
        Type: 'Map',
        ItemsPath: '$.items',
        // Every event at once, as the worker ran them when each had an execution of its own.
        MaxConcurrency: 0,
        ItemProcessor: {
          ProcessorConfig: { Mode: 'INLINE' },
          StartAt: BATCH_STATE_NAMES.run,
          States: {
            [BATCH_STATE_NAMES.run]: {
              Type: 'Parallel',
              Branches: [branch],
              ResultSelector: { 'output.$': '$[0]' },
              Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: BATCH_STATE_NAMES.failed }],
              End: true,
            },
            // The error object whole: a path to a field it may lack (a Fail state without
            // `Cause`) is a States.Runtime error, which would fail the batch.
            [BATCH_STATE_NAMES.failed]: {
              Type: 'Pass',
              Parameters: { 'failure.$': '$.failure' },
              End: true,
            },
          },
        },
        End: true,
      },
    },
  });
}

/** Every state of a definition's `States` by name, those of Parallel branches and Map processors included. */
function statesOf(states: unknown, found = new Map<string, Record<string, unknown> | undefined>()): Map<string, Record<string, unknown> | undefined> {
  if (typeof states !== 'object' || states === null) return found;
  for (const [name, state] of Object.entries(states as Record<string, Record<string, unknown> | undefined>)) {
    found.set(name, state);
    for (const branch of (Array.isArray(state?.Branches) ? state.Branches : []) as { States?: unknown }[]) statesOf(branch?.States, found);
    const processor = (state?.ItemProcessor ?? state?.Iterator) as { States?: unknown } | undefined;
    statesOf(processor?.States, found);
  }
  return found;
}

/**
 * Reads and checks a flow's `<name>.batch.json` in `dir`, if it has one:
 * `{"safeToRunAgain": true, "reason": "…"}`, the reason saying why a second run is harmless.
 * @throws Error naming the file and what is wrong.
 */
export function readBatchDeclaration(dir: string, flowName: string): BatchDeclaration {
  const file = join(dir, flowName + FLOW_BATCH_SUFFIX);
  if (!existsSync(file)) return {};
  let declared: unknown;
  try {
    declared = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`flow batch declaration ${file} is not JSON: ${(error as Error).message}`);
  }
  const { safeToRunAgain, reason, ...rest } = (typeof declared === 'object' && declared !== null && !Array.isArray(declared) ? declared : { invalid: true }) as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof safeToRunAgain !== 'boolean' || (safeToRunAgain && (typeof reason !== 'string' || !reason.trim()))) {
    throw new Error(`flow batch declaration ${file} must be {"safeToRunAgain": true or false, "reason": "why running an event again does no harm"}`);
  }
  return { safeToRunAgain };
}

/** Whether flow `name` (its definition text, found in `dir`) gets a batch state machine. */
export const hasBatchDefinition = (dir: string, name: string, definition: string): boolean =>
  batchDefinitionOf(definition, readBatchDeclaration(dir, name)) !== undefined;

/** The flows of the folders (the first folder that has a flow defines it) that get a batch state machine. */
export function listBatchFlowNames(dirs: readonly string[]): string[] {
  return listFlowNames(dirs).filter((name) => {
    const dir = dirs.find((candidate) => existsSync(flowFile(candidate, name)))!;
    return hasBatchDefinition(dir, name, readFileSync(flowFile(dir, name), 'utf8'));
  });
}
