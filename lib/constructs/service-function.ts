import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal, type IGrantable, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionSpec } from '../../functions/manifest.js';
import { esmBundle } from './esm-bundle.js';

export interface ServiceFunctionProps {
  /** The function's key in `FUNCTIONS`, e.g. `webhook`. */
  name: string;
  spec: FunctionSpec;
  /** Repository root: `spec.entry` is relative to it and its `package-lock.json` pins the bundle. */
  projectRoot: string;
  /** Settings every function receives; access-specific ones are added by the constructs that grant the access. */
  environment?: Record<string, string>;
  /** @default one month */
  logRetention?: RetentionDays;
}

/**
 * One handler of `functions/handlers` as a Lambda function, with what every function shares fixed
 * here: Node.js 22 on arm64, an ESM bundle made by the local esbuild (no Docker), JSON logs into
 * its own log group with a retention, and its own role that can only write to that log group.
 * Anything else the role may do is granted by the construct that owns the resource.
 */
export class ServiceFunction extends Construct implements IGrantable {
  readonly name: string;
  readonly spec: FunctionSpec;
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly grantPrincipal: IPrincipal;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.name = props.name;
    this.spec = props.spec;

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      // Logs age out through the retention; an orphaned group after the stack is gone buys nothing.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // An explicit role rather than AWSLambdaBasicExecutionRole, whose grant covers every log group.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Flowgate ${props.name}: only what functions/manifest.ts grants it`,
    });
    this.logGroup.grantWrite(this.role);
    this.grantPrincipal = this.role;

    this.function = new NodejsFunction(this, 'Handler', {
      // Bundled by esm-bundle.ts, not by NodejsFunction, which cannot split a bundle into chunks.
      code: esmBundle(props.projectRoot, props.spec.entry),
      handler: 'index.handler',
      description: `Flowgate ${props.name} (${props.spec.entry})`,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.spec.memoryMb,
      timeout: Duration.seconds(props.spec.timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      systemLogLevelV2: SystemLogLevel.WARN,
      // One service name for every function (as locally); each function logs to its own group.
      environment: { POWERTOOLS_SERVICE_NAME: 'flowgate', ...props.environment },
    });

    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'Node.js 22 is the runtime this service is specified and tested for (issue 2); a move to a newer runtime is a deliberate, tested upgrade rather than something the linter should force.',
    });
  }

  addEnvironment(name: string, value: string): void {
    this.function.addEnvironment(name, value);
  }
}
