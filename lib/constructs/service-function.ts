import { CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal, type IGrantable, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LayerVersion, LoggingFormat, Runtime, SystemLogLevel, type CfnFunction, type ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { CfnMetricFilter, LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { FunctionSpec } from '../../functions/manifest.js';
import { metricFiltersOf } from '../../functions/shared/metric-filters.js';
import type { LogLevel } from '../config.js';
import { environmentBytesByVariable, environmentBytesUpperBound, LAMBDA_ENVIRONMENT_MAX_BYTES } from '../lambda-environment-size.js';
import { esmBundle } from './esm-bundle.js';
import { nativeModulesLayerCode } from './native-modules-layer.js';

/**
 * Lambda's application log level for each of the service's levels: never above INFO. Lambda drops
 * JSON log lines below its level, and it reads a line without a `level` field as INFO: the metric
 * lines (`functions/shared/metric-line-writer.ts`) have none, so at WARN or above every metric and
 * the dashboard's custom widgets would go blank. The service's logger filters its own lines at the chosen level instead
 * (`functions/shared/logger.ts`, from `POWERTOOLS_LOG_LEVEL`); only TRACE and DEBUG, more verbose
 * than INFO, are Lambda's level too.
 * https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-log-level.html
 */
export const APPLICATION_LOG_LEVELS: Record<LogLevel, ApplicationLogLevel> = {
  TRACE: ApplicationLogLevel.TRACE,
  DEBUG: ApplicationLogLevel.DEBUG,
  INFO: ApplicationLogLevel.INFO,
  WARN: ApplicationLogLevel.INFO,
  ERROR: ApplicationLogLevel.INFO,
  CRITICAL: ApplicationLogLevel.INFO,
  SILENT: ApplicationLogLevel.INFO,
};

/**
 * Lambda writes the platform's START and REPORT lines (duration, memory used, init duration) at
 * INFO, about 470 bytes an invocation: at the receiver's one invocation per webhook that was
 * $0.22 of log ingestion per million webhooks, more than every other log line of an event
 * together. Duration, errors and throttles are Lambda's own metrics either way, so the lines are
 * kept only when debugging (`logLevel` DEBUG or TRACE); otherwise the platform's warnings alone.
 * Same page as above.
 */
export const systemLogLevelFor = (logLevel: LogLevel | undefined): SystemLogLevel =>
  logLevel === 'DEBUG' || logLevel === 'TRACE' ? SystemLogLevel.INFO : SystemLogLevel.WARN;

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
  /** What the function logs: Lambda's application log level and the Powertools logger's. @default INFO */
  logLevel?: LogLevel;
  /**
   * The flows' definitions by name, for a function that serves them (`GET /flows/{name}`): written
   * into its bundle, since they would not fit Lambda's 4 KB of environment.
   */
  flowDefinitions?: Readonly<Record<string, unknown>>;
}

/** The native-modules layers made in each stack, by architecture and modules. */
const layersByStack = new WeakMap<Stack, Map<string, ILayerVersion>>();
function sharedLayers(stack: Stack): Map<string, ILayerVersion> {
  let layers = layersByStack.get(stack);
  if (!layers) layersByStack.set(stack, layers = new Map());
  return layers;
}

/**
 * One handler of `functions/handlers` as a Lambda function, with what every function shares fixed
 * here: Node.js 22 on arm64 (or the spec's architecture), an ESM bundle made by the local esbuild (no Docker), JSON logs into
 * its own log group with a retention, the metric filters there that make the `Flowgate` metrics of
 * the lines it writes (`functions/shared/metric-filters.ts`), and its own role that can only write
 * to that log group.
 * Anything else the role may do is granted by the construct that owns the resource. Synth fails
 * when its environment variables could pass Lambda's 4 KB limit once deployed.
 */
export class ServiceFunction extends Construct implements IGrantable {
  readonly name: string;
  readonly spec: FunctionSpec;
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  /** The layer holding the spec's native modules, if it has any. */
  readonly nativeModulesLayer?: ILayerVersion;
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
    // The function's metric lines become metrics here, on its own log group: one filter a metric it writes.
    for (const filter of metricFiltersOf(props.name)) {
      new CfnMetricFilter(this, `Metric${filter.metricName}`, {
        logGroupName: this.logGroup.logGroupName,
        filterPattern: filter.filterPattern,
        metricTransformations: [{
          metricName: filter.metricName,
          metricNamespace: filter.metricNamespace,
          metricValue: filter.metricValue,
          unit: filter.unit,
          dimensions: Object.entries(filter.dimensions).map(([key, value]) => ({ key, value })),
        }],
      });
    }

    const architecture = props.spec.architecture === 'x86_64' ? Architecture.X86_64 : Architecture.ARM_64;
    if (props.spec.nativeModules?.length) {
      // One layer per set of modules in a stack: the search function and its maintenance share the engine's.
      const shared = sharedLayers(Stack.of(this));
      const key = `${architecture.name}:${props.spec.nativeModules.join(',')}`;
      this.nativeModulesLayer = shared.get(key) ?? new LayerVersion(this, 'NativeModules', {
        code: nativeModulesLayerCode(props.projectRoot, props.spec.nativeModules),
        compatibleRuntimes: [Runtime.NODEJS_22_X],
        compatibleArchitectures: [architecture],
        description: `Flowgate ${props.name}: ${props.spec.nativeModules.join(', ')} with their platform binary and dependencies`,
      });
      shared.set(key, this.nativeModulesLayer);
    }

    this.function = new NodejsFunction(this, 'Handler', {
      // Bundled by esm-bundle.ts, not by NodejsFunction, which cannot split a bundle into chunks.
      code: esmBundle(props.projectRoot, props.spec.entry, { withConsole: props.spec.servesConsole, flowDefinitions: props.flowDefinitions, external: props.spec.nativeModules }),
      handler: 'index.handler',
      description: `Flowgate ${props.name} (${props.spec.entry})`,
      runtime: Runtime.NODEJS_22_X,
      architecture,
      ...(this.nativeModulesLayer && { layers: [this.nativeModulesLayer] }),
      memorySize: props.spec.memoryMb,
      timeout: Duration.seconds(props.spec.timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: APPLICATION_LOG_LEVELS[props.logLevel ?? 'INFO'],
      systemLogLevelV2: systemLogLevelFor(props.logLevel),
      // The level the service's logger filters its lines at (the `logLevel` setting).
      environment: {
        ...(props.logLevel && { POWERTOOLS_LOG_LEVEL: props.logLevel }),
        ...props.environment,
      },
    });

    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'Node.js 22 is the runtime this service is specified and tested for (issue 2); a move to a newer runtime is a deliberate, tested upgrade rather than something the linter should force.',
    });
    // At synth, once every construct has added its variables: a deploy would fail far later.
    this.node.addValidation({ validate: () => this.environmentSizeErrors() });
  }

  addEnvironment(name: string, value: string): void {
    this.function.addEnvironment(name, value);
  }

  /** Counts the environment as the template gives it, each deploy-time value at its longest. */
  private environmentSizeErrors(): string[] {
    const stack = Stack.of(this);
    const resolved = stack.resolve((this.function.node.defaultChild as CfnFunction).environment) as { variables?: Record<string, unknown> } | undefined;
    const variables = resolved?.variables ?? {};
    const resourceTypes = new Map(stack.node.findAll().filter(CfnResource.isCfnResource).map((r) => [stack.resolve(r.logicalId) as string, r.cfnResourceType]));
    const resourceTypeOf = (logicalId: string) => resourceTypes.get(logicalId);
    try {
      const bytes = environmentBytesUpperBound(variables, resourceTypeOf);
      if (bytes <= LAMBDA_ENVIRONMENT_MAX_BYTES) return [];
      const largest = Object.entries(environmentBytesByVariable(variables, resourceTypeOf))
        .sort(([, a], [, b]) => b - a).slice(0, 3).map(([name, size]) => `${name} ${size}`).join(', ');
      return [`function ${this.name}: its environment variables can take ${bytes} bytes once deployed, over Lambda's limit of ${LAMBDA_ENVIRONMENT_MAX_BYTES} bytes (4 KB), and the deploy would fail. Largest (bytes): ${largest}.`];
    } catch (error) {
      return [`function ${this.name}: ${(error as Error).message}`];
    }
  }
}
