import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { ExecutionError, ExecutionTimeoutError, StateMachine } from 'aws-local-stepfunctions';
import type { EngineEndpoints } from './flow-integrations.js';
import { LocalFlowTasks } from './flow-tasks.js';
import { batchDefinitionOf, readBatchDeclaration } from '../lib/flow-batch.js';
import { FLOW_NAME } from '../functions/domain/flows/flow-name.js';
import { EXPRESS_MAX_DURATION_MS, MAX_FLOW_INPUT_BYTES as MAX_PAYLOAD_BYTES } from '../functions/domain/flows/limits.js';
import { flowFile } from '../lib/flow-files.js';
import { keepIdleConnections } from './idle-connections.js';

// aws-local-stepfunctions 3 times Task states with `Promise.withResolvers`, which Node.js has only
// from version 22; package.json (and this machine) allow Node.js 20. Without it every Task state
// fails with a TypeError, so the local stack supplies the standard method where it is missing.
if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      return { promise, resolve, reject };
    },
  });
}

export interface LocalStepFunctionsOptions {
  /** Folders searched in order for `<flow>.asl.json`. */
  flowsDirs: string[];
  /** ARNs are `${arnPrefix}${flowName}`, as the CDK stack names the flows' state machines. */
  arnPrefix: string;
  /** A flow's batch state machine (lib/flow-batch.ts) is `${batchArnPrefix}${flowName}`. */
  batchArnPrefix?: string;
  /** How Task states run locally; without it every Task fails, naming its resource. */
  tasks?: LocalFlowTasks;
  /** The local DynamoDB and SQS engines, which flows' DynamoDB and SQS integrations call. */
  engines?: EngineEndpoints;
}

/**
 * An embedded Step Functions endpoint speaking the real AWS JSON 1.0 protocol, so the product's
 * own `SFNClient` runs flows locally. It serves `StartSyncExecution` (express workflows) by
 * running the flow's definition with `aws-local-stepfunctions`. Definitions are read on each
 * start, so editing a flow file takes effect without a restart.
 */
export async function startLocalStepFunctions(options: LocalStepFunctionsOptions): Promise<{ endpoint: string; server: Server }> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(body));
    };
    try {
      const target = String(req.headers['x-amz-target'] ?? '');
      if (target !== 'AWSStepFunctions.StartSyncExecution') {
        return reply(400, { __type: 'UnknownOperationException', message: `${target} is not supported locally` });
      }
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { stateMachineArn?: string; input?: string; name?: string };
      reply(200, await startSyncExecution(options, request));
    } catch (error) {
      const known = error as { __type?: string; message?: string };
      reply(400, { __type: known.__type ?? 'InvalidExecutionInput', message: known.message ?? 'bad request' });
    }
  });
  await new Promise<void>((resolve) => keepIdleConnections(server).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, server };
}

/**
 * Building a StateMachine validates its definition, which costs hundreds of milliseconds of CPU;
 * runs are independent, so one machine per definition text serves every execution of it.
 */
const machines = new Map<string, StateMachine>();
function stateMachineFor(definition: string): StateMachine {
  let machine = machines.get(definition);
  if (!machine) {
    machine = new StateMachine(JSON.parse(definition), { validationOptions: { checkArn: false } });
    machines.set(definition, machine);
  }
  return machine;
}

async function startSyncExecution(options: LocalStepFunctionsOptions, request: { stateMachineArn?: string; input?: string; name?: string }) {
  const arn = request.stateMachineArn ?? '';
  const batch = options.batchArnPrefix !== undefined && arn.startsWith(options.batchArnPrefix);
  const prefix = batch ? options.batchArnPrefix! : options.arnPrefix;
  const flowName = arn.startsWith(prefix) ? arn.slice(prefix.length) : '';
  if (!FLOW_NAME.test(flowName)) throw { __type: 'StateMachineDoesNotExist', message: `no state machine ${arn}` };
  let file: string | undefined;
  let folder: string | undefined;
  for (const dir of options.flowsDirs) {
    try {
      file = await readFile(flowFile(dir, flowName), 'utf8');
      folder = dir;
      break;
    } catch {
      // not in this folder
    }
  }
  // The stack deploys a batch state machine only for a flow that can run as one (flow-batch.ts).
  const flowDefinition = batch && file !== undefined ? batchDefinitionOf(file, readBatchDeclaration(folder!, flowName)) : file;
  if (flowDefinition === undefined) throw { __type: 'StateMachineDoesNotExist', message: `no state machine ${arn}` };
  const tasks = options.tasks ?? LocalFlowTasks.none();
  const definition = tasks.substitute(flowDefinition);
  const name = request.name ?? randomUUID();
  const input = request.input ?? '{}';
  if (Buffer.byteLength(input) > MAX_PAYLOAD_BYTES) {
    throw { __type: 'ValidationException', message: `input exceeds the ${MAX_PAYLOAD_BYTES}-byte limit` };
  }
  const startDate = Date.now() / 1000;
  const base = { executionArn: `${arn.replace(':stateMachine:', ':express:')}:${name}:${randomUUID()}`, stateMachineArn: arn, name, startDate, input };
  try {
    const execution = stateMachineFor(definition).run(JSON.parse(input), {
      overrides: { taskResourceLocalHandlers: tasks.handlersFor(JSON.parse(definition), options.engines) },
    });
    const timer = setTimeout(() => execution.abort(), EXPRESS_MAX_DURATION_MS);
    try {
      const output = JSON.stringify(await execution.result);
      if (Buffer.byteLength(output) > MAX_PAYLOAD_BYTES) {
        return { ...base, stopDate: Date.now() / 1000, status: 'FAILED', error: 'States.DataLimitExceeded', cause: 'output exceeds 256 KiB' };
      }
      return { ...base, stopDate: Date.now() / 1000, status: 'SUCCEEDED', output };
    } finally {
      clearTimeout(timer);
    }
  } catch (error) {
    if (error instanceof ExecutionTimeoutError) return { ...base, stopDate: Date.now() / 1000, status: 'TIMED_OUT' };
    const cause = error instanceof ExecutionError ? (error.cause as Error | undefined) : (error as Error);
    return { ...base, stopDate: Date.now() / 1000, status: 'FAILED', error: cause?.name ?? 'States.Runtime', cause: cause?.message ?? '' };
  }
}
