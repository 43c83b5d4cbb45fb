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
 *                                             └─ Catch ──▶ { "error": …, "cause": … }
 *
 * Only the execution differs: `$$.Execution` is the batch's. A flow that reads it, or sets what a
 * branch cannot hold (`QueryLanguage` at the top), gets no batch state machine, and its events
 * keep one execution each. The flow's `TimeoutSeconds` becomes the batch's.
 */
export const BATCH_STATE_NAMES = { map: 'FlowgateBatch', run: 'FlowgateBatchRun', failed: 'FlowgateBatchRunFailed' } as const;
/** What a flow definition may hold at its top level and still run as a branch. */
const BRANCH_KEYS = new Set(['StartAt', 'States', 'Comment']);
const TOP_ONLY_KEYS = new Set(['TimeoutSeconds', 'Version']);

/** The batch definition of a flow, or undefined when the flow must keep one execution per event. */
export function batchDefinitionOf(definition: string): string | undefined {
  if (definition.includes('$$.Execution')) return undefined;
  const flow = JSON.parse(definition) as Record<string, unknown>;
  if (Object.keys(flow).some((key) => !BRANCH_KEYS.has(key) && !TOP_ONLY_KEYS.has(key))) return undefined;
  // State names are unique across a whole state machine, nested ones included.
  if (Object.values(BATCH_STATE_NAMES).some((name) => stateNames(flow.States).has(name))) return undefined;
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
            [BATCH_STATE_NAMES.failed]: {
              Type: 'Pass',
              Parameters: { 'error.$': '$.failure.Error', 'cause.$': '$.failure.Cause' },
              End: true,
            },
          },
        },
        End: true,
      },
    },
  });
}

/** Every state name of a definition's `States`, those of Parallel branches and Map processors included. */
function stateNames(states: unknown, found = new Set<string>()): Set<string> {
  if (typeof states !== 'object' || states === null) return found;
  for (const [name, state] of Object.entries(states as Record<string, Record<string, unknown>>)) {
    found.add(name);
    for (const branch of (Array.isArray(state?.Branches) ? state.Branches : []) as { States?: unknown }[]) stateNames(branch?.States, found);
    const processor = (state?.ItemProcessor ?? state?.Iterator) as { States?: unknown } | undefined;
    stateNames(processor?.States, found);
  }
  return found;
}
