import { readFileSync } from 'node:fs';
import { ArnFormat, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import { DefinitionBody, LogLevel as FlowLogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { FLOW_NAME } from '../../functions/domain/flows/flow-name.js';
import { batchDefinitionOf, readBatchDeclaration } from '../flow-batch.js';
import { checkFlowDefinition } from '../flow-definition.js';
import { checkFunctionReferences, functionSubstitutionKey } from '../flow-functions.js';
import { readFlowPermissions } from '../flow-permissions.js';
import { FLOW_FILE_SUFFIX, flowFile, listFlowNames } from '../flow-files.js';
import type { LogLevel } from '../config.js';
import type { ServiceFunction } from './service-function.js';

export const flowLogLevelFor = (logLevel: LogLevel | undefined): FlowLogLevel =>
  logLevel === 'DEBUG' || logLevel === 'TRACE' ? FlowLogLevel.ALL : FlowLogLevel.ERROR;

/** Step Functions' limit on state machine names. */
const MAX_STATE_MACHINE_NAME_LENGTH = 80;

export interface FlowsProps {
  /** Folder of `<name>.asl.json` definitions, read at synth time. */
  flowsDir: string;
  /** The stack's `logLevel`: DEBUG or TRACE logs every execution's every event, anything else failed executions only. */
  logLevel?: LogLevel;
  logRetention?: RetentionDays;
  /** The project's flow functions (`flows/functions/`), by name: a flow may invoke those its definition names. */
  functions?: Record<string, ServiceFunction>;
}

/**
 * One express state machine per flow definition, named `<stack>-flow-<name>` so that a handler
 * finds one as `FLOW_STATE_MACHINE_ARN_PREFIX + name`. Each logs its failed executions' events (every event when
 * debugging; never the execution's data) to its own log group and traces with X-Ray.
 */
export class Flows extends Construct {
  readonly names: readonly string[];
  /** Each flow's definition as its file holds it (placeholders and all), parsed: what `GET /flows/{name}` answers. */
  readonly definitions: Readonly<Record<string, Record<string, unknown>>>;
  readonly stateMachines: Record<string, StateMachine>;
  /** ARN of a flow's state machine without the flow name. */
  readonly arnPrefix: string;
  /** The flows' batch state machines (lib/flow-batch.ts), by flow: those that can run as one; the flow worker is told their names. */
  readonly batchStateMachines: Record<string, StateMachine>;
  /** ARN of a flow's batch state machine without the flow name. */
  readonly batchArnPrefix: string;

  constructor(scope: Construct, id: string, props: FlowsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const namePrefix = `${stack.stackName}-flow-`;
    this.arnPrefix = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: namePrefix, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    this.names = listFlowNames(props.flowsDir);
    if (this.names.length === 0) throw new Error(`no *${FLOW_FILE_SUFFIX} flow definitions in ${props.flowsDir}`);

    this.stateMachines = {};
    this.batchStateMachines = {};
    const batchNamePrefix = `${stack.stackName}-batch-`;
    this.batchArnPrefix = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: batchNamePrefix, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const definitions: Record<string, Record<string, unknown>> = {};
    this.definitions = definitions;
    for (const name of this.names) {
      // The trigger API's rule for flow names, so that every deployed flow can be chosen.
      if (!FLOW_NAME.test(name)) throw new Error(`flow file ${name}${FLOW_FILE_SUFFIX}: the name must match ${FLOW_NAME}`);
      const stateMachineName = namePrefix + name;
      if (stateMachineName.length > MAX_STATE_MACHINE_NAME_LENGTH) {
        throw new Error(`state machine name ${stateMachineName} is over ${MAX_STATE_MACHINE_NAME_LENGTH} characters: shorten the flow or the stack name`);
      }
      const file = flowFile(props.flowsDir, name);
      const definition = readFileSync(file, 'utf8');
      // Here, at synth, rather than when CloudFormation creates the state machine.
      checkFlowDefinition(file, definition);
      definitions[name] = JSON.parse(definition) as Record<string, unknown>;
      const functions = props.functions ?? {};
      const calls = checkFunctionReferences(file, definition, new Set(Object.keys(functions)), props.flowsDir);
      const permissions = readFlowPermissions(props.flowsDir, name);

      const substitutions = calls.length > 0
        ? { definitionSubstitutions: Object.fromEntries(calls.map((fn) => [functionSubstitutionKey(fn), functions[fn]!.function.functionArn])) }
        : {};
      const stateMachine = this.expressMachine(name, stateMachineName, definition, substitutions, props);
      // Its batch state machine shares its role, so it may do exactly what the flow may. A name
      // over the limit leaves the flow without one: its events then run one execution each.
      const batchDefinition = batchDefinitionOf(definition, readBatchDeclaration(props.flowsDir, name));
      const batchName = batchNamePrefix + name;
      if (batchDefinition !== undefined && batchName.length <= MAX_STATE_MACHINE_NAME_LENGTH) {
        this.batchStateMachines[name] = this.expressMachine(`${name}Batch`, batchName, batchDefinition, substitutions, props, stateMachine.role);
      }
      Validations.of(stateMachine.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Generated by CDK for Step Functions logging and X-Ray: CloudWatch Logs log delivery (logs:CreateLogDelivery and related) and xray:PutTraceSegments/PutTelemetryRecords/GetSampling* do not support resource-level permissions, so their resource must be "*".',
      });
      // Least privilege per flow: the functions it names (the unqualified ARN, which is what
      // `${Function.<name>}` gives) and what its own permissions file declares, nothing else.
      if (calls.length > 0) {
        stateMachine.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: calls.map((fn) => functions[fn]!.function.functionArn) }));
      }
      for (const permission of permissions) {
        stateMachine.addToRolePolicy(new PolicyStatement({ actions: permission.actions, resources: permission.resources }));
        for (const resource of permission.resources.filter((r) => r.includes('*') && r !== '*')) {
          Validations.of(stateMachine.role).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason: `${name}.permissions.json: ${permission.reason}` });
        }
      }
      this.stateMachines[name] = stateMachine;
    }
  }

  /** Lets the function run every flow synchronously (and only that: no async start, no stop). */
  connectRunner(fn: ServiceFunction): void {
    for (const stateMachine of Object.values(this.stateMachines)) stateMachine.grantStartSyncExecution(fn);
  }

  /** Lets the function run the flows' batch state machines too (the flow worker). */
  connectBatchRunner(fn: ServiceFunction): void {
    for (const stateMachine of Object.values(this.batchStateMachines)) stateMachine.grantStartSyncExecution(fn);
  }

  /** An express state machine with its own log group, logging and tracing as `logLevel` says. */
  private expressMachine(id: string, stateMachineName: string, definition: string, substitutions: { definitionSubstitutions?: Record<string, string> }, props: FlowsProps, role?: IRole): StateMachine {
    const logGroup = new LogGroup(this, `${id}Logs`, {
      // Step Functions' log delivery wants this prefix to keep the account's log resource policy small.
      logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stateMachine = new StateMachine(this, id, {
      stateMachineName,
      stateMachineType: StateMachineType.EXPRESS,
      definitionBody: DefinitionBody.fromString(definition),
      // `${Function.<name>}` becomes the function's ARN when CloudFormation creates the state machine.
      ...substitutions,
      ...(role && { role }),
      // Never the inputs and outputs: those carry webhook payloads. Every event of every
      // execution (level ALL) was about 1,350 bytes a run of a one-state flow, $0.63 of log
      // ingestion per million webhooks, repeating what the execution record already keeps (status,
      // timeline, output): only failed executions' events are logged unless debugging.
      logs: { destination: logGroup, level: flowLogLevelFor(props.logLevel), includeExecutionData: false },
      // X-Ray bills $5 per million traces, and at a quiet account's rate its default sampling (the
      // first request each second) records nearly every execution: on only when debugging.
      tracingEnabled: flowLogLevelFor(props.logLevel) === FlowLogLevel.ALL,
    });
    if (flowLogLevelFor(props.logLevel) !== FlowLogLevel.ALL) {
      Validations.of(stateMachine).acknowledge({
        id: 'AwsSolutions-SF1',
        reason: 'Logging every event of every execution cost about $0.63 per million webhooks for a one-state flow, repeating the execution record (status, timeline, output); failed executions are logged (level ERROR), and every event with logLevel DEBUG or TRACE.',
      }, {
        id: 'AwsSolutions-SF2',
        reason: 'X-Ray bills $5 per million traces and its default sampling records nearly every execution of a quiet account; tracing is on with logLevel DEBUG or TRACE. Each execution\'s status, attempts and timeline are in the executions table.',
      });
    }
    return stateMachine;
  }
}
