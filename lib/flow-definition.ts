import validateAsl from 'asl-validator';

/**
 * Integration patterns that only standard workflows run: "Run a Job" (`.sync`, also `.sync:2`)
 * and "Wait for Callback" (`.waitForTaskToken`). Express workflows support Request Response only
 * (https://docs.aws.amazon.com/step-functions/latest/dg/integrate-optimized.html), and every flow
 * here is an express state machine, so a Task using one would only fail when deployed.
 */
const STANDARD_ONLY_RESOURCE = /\.(sync(:\d+)?|waitForTaskToken)$/;

type States = Record<string, Record<string, unknown> | undefined>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Every state of a definition with where it sits, nested states included: Parallel branches and
 * Map iterations (`ItemProcessor`, or the older `Iterator`).
 */
function* walkStates(states: unknown, path: readonly string[] = []): Generator<{ path: string; state: Record<string, unknown> }> {
  if (!isObject(states)) return;
  for (const [name, state] of Object.entries(states as States)) {
    if (!isObject(state)) continue;
    const here = [...path, `"${name}"`];
    yield { path: here.join(' > '), state };
    if (state.Type === 'Parallel' && Array.isArray(state.Branches)) {
      for (const [index, branch] of state.Branches.entries()) {
        if (isObject(branch)) yield* walkStates(branch.States, [...here, `branch ${index + 1}`]);
      }
    }
    if (state.Type === 'Map') {
      const processor = state.ItemProcessor ?? state.Iterator;
      if (isObject(processor)) yield* walkStates(processor.States, [...here, 'iteration']);
    }
  }
}

/**
 * asl-validator's verdict on a definition's text, kept for the process: the validator builds and
 * compiles its whole JSON schema on every call (about 0.3 s), and a synth checks each flow once
 * more for every app built in the same process (the template tests build several).
 */
const aslVerdicts = new Map<string, string | undefined>();
function aslSchemaErrors(text: string, definition: Record<string, unknown>): string | undefined {
  if (!aslVerdicts.has(text)) {
    // The validator writes defaults into what it is given: let it have its own copy.
    const result = validateAsl(structuredClone(definition));
    aslVerdicts.set(text, result.isValid ? undefined : result.errorsText('\n  '));
  }
  return aslVerdicts.get(text);
}

/**
 * Checks a flow definition, as its file holds it, before it becomes an express state machine:
 * it must be JSON, valid Amazon States Language (asl-validator: schema, transitions, terminal
 * states, paths), and use no integration pattern express workflows refuse. Strings such as
 * `"${Function.summarize}"` pass: definition substitutions are filled in later by CloudFormation.
 *
 * @throws Error naming the file and, where one is at fault, the state.
 */
export function checkFlowDefinition(file: string, text: string): void {
  let definition: unknown;
  try {
    definition = JSON.parse(text);
  } catch (error) {
    throw new Error(`flow definition ${file} is not JSON: ${(error as Error).message}`);
  }
  if (!isObject(definition)) throw new Error(`flow definition ${file} is not a JSON object`);

  const schemaErrors = aslSchemaErrors(text, definition);
  if (schemaErrors !== undefined) throw new Error(`flow definition ${file} is not valid Amazon States Language:\n  ${schemaErrors}`);

  for (const { path, state } of walkStates(definition.States)) {
    if (state.Type === 'Task' && typeof state.Resource === 'string' && STANDARD_ONLY_RESOURCE.test(state.Resource)) {
      throw new Error(`flow definition ${file}: state ${path} uses ${state.Resource}, which express state machines do not support (Request Response only: drop the .sync / .waitForTaskToken suffix)`);
    }
  }
}
