import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { FLOW_FUNCTION_TIMEOUT_SECONDS, listFlowFunctions, readFlowFunctionSettings, settingsOf, substituteFunctions } from '../lib/flow-functions.js';
import { callLocalIntegration, localIntegration, type EngineEndpoints } from './flow-integrations.js';
import { lambdaContext } from './lambda-context.js';

/** `${Function.<name>}` becomes this prefix + name locally, as CloudFormation gives the function's ARN deployed. */
export const LOCAL_FUNCTION_ARN_PREFIX = 'arn:aws:lambda:us-east-1:000000000000:function:flow-';
/** The optimized Lambda integration (Request Response, the only pattern express workflows run). */
const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';

type FlowFunctionHandler = (event: unknown, context: Context) => unknown;
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type TaskHandler = (input: JsonValue) => Promise<JsonValue>;

/**
 * A Task's failure as Step Functions reports it: `name` is the error `Retry` and `Catch` match
 * (`ErrorEquals`), `message` the cause.
 */
export class TaskFailed extends Error {
  constructor(error: string, cause: string) {
    super(cause);
    this.name = error;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every Task state of a definition by name, nested ones (Parallel branches, Map iterations) included. */
function taskStates(states: unknown, found = new Map<string, Record<string, unknown>>()): Map<string, Record<string, unknown>> {
  if (!isObject(states)) return found;
  for (const [name, state] of Object.entries(states)) {
    if (!isObject(state)) continue;
    if (state.Type === 'Task') found.set(name, state);
    if (state.Type === 'Parallel' && Array.isArray(state.Branches)) for (const branch of state.Branches) if (isObject(branch)) taskStates(branch.States, found);
    if (state.Type === 'Map') {
      const processor = state.ItemProcessor ?? state.Iterator;
      if (isObject(processor)) taskStates(processor.States, found);
    }
  }
  return found;
}

/**
 * Runs flows' Task states on the local stack. A Task that calls one of the project's flow
 * functions (`flows/functions/<name>.ts`) runs its handler in this process, with a Lambda context
 * and, through `arn:aws:states:::lambda:invoke`, the optimized integration's output
 * (`Payload`, `StatusCode`, `ExecutedVersion`, …); a handler that throws fails the Task with the
 * thrown error's name, as Lambda reports it, so `Retry` and `Catch` behave as deployed. DynamoDB
 * and SQS integrations run against the local engines (`flow-integrations.ts`). Any other resource
 * fails the Task at once with an error naming it: nothing is sent to AWS, nothing hangs.
 */
export class LocalFlowTasks {
  private constructor(private readonly functions: ReadonlyMap<string, FlowFunctionHandler>) {}

  /** No flow functions: every Task fails, naming its resource. */
  static none(): LocalFlowTasks {
    return new LocalFlowTasks(new Map());
  }

  /**
   * Loads the flow functions of each folder (the first folder that has a name wins, as for flows).
   * A module exporting `createHandler(settings)` is built with the settings it declares in its
   * folder's `functions/settings.json`, valued from `env` (the local stack's own settings, never
   * `process.env`); otherwise its `handler` is used as is.
   */
  static async load(flowsDirs: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<LocalFlowTasks> {
    const functions = new Map<string, FlowFunctionHandler>();
    for (const dir of flowsDirs) {
      const table = readFlowFunctionSettings(dir);
      for (const { name, file } of listFlowFunctions(dir)) {
        if (functions.has(name)) continue;
        const module = (await import(pathToFileURL(file).href)) as { handler?: unknown; createHandler?: unknown };
        const handler = typeof module.createHandler === 'function'
          ? (module.createHandler as (settings: Record<string, string>) => unknown)(settingsOf(name, table, (variable) => env[variable]))
          : module.handler;
        if (typeof handler !== 'function') throw new Error(`flow function ${file} exports no handler function`);
        functions.set(name, handler as FlowFunctionHandler);
      }
    }
    return new LocalFlowTasks(functions);
  }

  /** The definition as the local engine runs it: `${Function.<name>}` replaced by local ARNs. */
  substitute(definition: string): string {
    return substituteFunctions(definition, (name) => LOCAL_FUNCTION_ARN_PREFIX + name);
  }

  /** A local handler for every Task state of a (substituted) definition, by state name. */
  handlersFor(definition: unknown, engines?: EngineEndpoints): Record<string, TaskHandler> {
    const handlers: Record<string, TaskHandler> = {};
    for (const [name, state] of taskStates(isObject(definition) ? definition.States : undefined)) {
      const resource = String(state.Resource);
      if (resource === LAMBDA_INVOKE) {
        handlers[name] = async (input) => {
          const params = isObject(input) ? input : {};
          const payload = await this.invoke(String(params.FunctionName ?? ''), params.Payload ?? {});
          const requestId = randomUUID();
          return {
            ExecutedVersion: '$LATEST',
            Payload: payload,
            SdkHttpMetadata: { HttpHeaders: { 'X-Amz-Executed-Version': '$LATEST', 'x-amzn-RequestId': requestId }, HttpStatusCode: 200 },
            SdkResponseMetadata: { RequestId: requestId },
            StatusCode: 200,
          };
        };
      } else if (resource.startsWith(LOCAL_FUNCTION_ARN_PREFIX)) {
        // The older form: the function's ARN as the Resource; its answer is the state's result.
        handlers[name] = (input) => this.invoke(resource, input);
      } else if (engines && localIntegration(resource)) {
        const integration = localIntegration(resource)!;
        handlers[name] = async (input) => (await callLocalIntegration(integration, engines, input)) as JsonValue;
      } else {
        handlers[name] = async () => {
          throw new TaskFailed('Local.UnsupportedIntegration', `state "${name}": ${resource} has no local engine; it runs only when deployed`);
        };
      }
    }
    return handlers;
  }

  /** Invokes a flow function by ARN or name as Lambda would: JSON in, JSON out, within its timeout. */
  private async invoke(functionName: string, payload: unknown): Promise<JsonValue> {
    const name = (functionName.startsWith(LOCAL_FUNCTION_ARN_PREFIX) ? functionName.slice(LOCAL_FUNCTION_ARN_PREFIX.length) : functionName).split(':')[0]!;
    const handler = this.functions.get(name);
    if (!handler) throw new TaskFailed('Lambda.ResourceNotFoundException', `Function not found: ${functionName}`);
    let timer: NodeJS.Timeout | undefined;
    try {
      const event = JSON.parse(JSON.stringify(payload ?? null)) as unknown;
      const timeout = new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new TaskFailed('Sandbox.Timedout', `Task timed out after ${FLOW_FUNCTION_TIMEOUT_SECONDS}.00 seconds`)), FLOW_FUNCTION_TIMEOUT_SECONDS * 1000);
      });
      const result = await Promise.race([Promise.resolve(handler(event, lambdaContext(`flow-${name}`, FLOW_FUNCTION_TIMEOUT_SECONDS))), timeout]);
      return JSON.parse(JSON.stringify(result ?? null)) as JsonValue;
    } catch (error) {
      if (error instanceof TaskFailed) throw error;
      // Lambda reports an unhandled error by its name; the cause is the runtime's JSON.
      const failure = error instanceof Error ? error : new Error(String(error));
      const errorType = failure.name || 'Error';
      throw new TaskFailed(errorType, JSON.stringify({ errorType, errorMessage: failure.message, trace: [] }));
    } finally {
      clearTimeout(timer);
    }
  }
}
