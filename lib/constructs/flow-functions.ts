import { relative } from 'node:path';
import { Construct } from 'constructs';
import type { LogLevel } from '../config.js';
import { FLOW_FUNCTION_MEMORY_MB, FLOW_FUNCTION_TIMEOUT_SECONDS, listFlowFunctions, readFlowFunctionSettings, settingsOf } from '../flow-functions.js';
import { ServiceFunction } from './service-function.js';

export interface FlowFunctionsProps {
  /** Folder of flows; its `functions/<name>.ts` are the functions. */
  flowsDir: string;
  /** Root the bundles are made from (its `package-lock.json` pins them). */
  projectRoot: string;
  /** CDK context reader: a flow function's settings (`functions/settings.json`) are valued from it. */
  context: (key: string) => string | undefined;
  logLevel?: LogLevel;
}

/**
 * The project's own functions that flows call (`flows/functions/<name>.ts`), each deployed once as
 * a {@link ServiceFunction} like the service's own (Node.js 22, arm64, bundled, JSON logs), with
 * no access to any table, queue or key: a flow function reaches AWS only through what its flow
 * passes it. Which state machine may invoke it is the Flows construct's business.
 */
export class FlowFunctions extends Construct {
  readonly functions: Record<string, ServiceFunction> = {};

  constructor(scope: Construct, id: string, props: FlowFunctionsProps) {
    super(scope, id);
    const settings = readFlowFunctionSettings(props.flowsDir);
    for (const { name, file } of listFlowFunctions(props.flowsDir)) {
      this.functions[name] = new ServiceFunction(this, name, {
        name: `flow function ${name}`,
        spec: { entry: relative(props.projectRoot, file), timeoutSeconds: FLOW_FUNCTION_TIMEOUT_SECONDS, memoryMb: FLOW_FUNCTION_MEMORY_MB, tables: {}, sendsTo: [] },
        projectRoot: props.projectRoot,
        logLevel: props.logLevel,
        environment: settingsOf(name, settings, (_, setting) => props.context(setting.context)),
      });
    }
  }
}
