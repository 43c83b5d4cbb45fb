import { CfnOutput, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { FunctionSpec, TableAccess, TableName } from '../../functions/manifest.js';
import { SETTINGS } from '../../functions/settings.js';
import type { LogLevel } from '../config.js';
import { ServiceFunction } from './service-function.js';

/*
 * `flowgate listen`'s endpoint deployed: an API Gateway WebSocket API whose `$connect` is let in by
 * an authorizer with the gateway's own credential check, a connections table (TTL) saying who
 * listens to which trigger and keeping listeners' answers for waiting senders, and pushes from the
 * receiver through the management API (`functions/adapters/aws/websocket-listeners.ts`). The local
 * stack runs the same functions behind an emulator of this API (`local/listen-server.ts`).
 * Limits API Gateway sets: a frame is 32 KB, a message 128 KB (larger deliveries travel by
 * reference), a connection lasts 2 hours (the CLI reconnects and resumes), 10 minutes idle.
 */

/** The listen function: reads triggers and deliveries (the replay), records answers; the authorizer: looks API keys up. */
export const LISTEN_SPEC = {
  entry: 'functions/entries/listen.ts',
  timeoutSeconds: 29,
  memoryMb: 256,
  tables: {
    auth: ['GetItem'],
    triggers: ['GetItem', 'Query'],
    executions: ['GetItem', 'Query', 'BatchGetItem', 'UpdateItem'],
  },
  sendsTo: [],
} as const satisfies FunctionSpec;

export const LISTEN_AUTHORIZER_SPEC = {
  entry: 'functions/entries/listen-authorizer.ts',
  timeoutSeconds: 10,
  memoryMb: 256,
  tables: { auth: ['GetItem'] },
  sendsTo: [],
} as const satisfies FunctionSpec;

/** What the receiver needs to push: read its delivery's record (the inspector's read) and find the trigger's connections. */
export const PUSHER_TABLES: Partial<Record<TableName, TableAccess>> = { executions: ['GetItem'] };

export interface ListenApiProps {
  projectRoot: string;
  logLevel?: LogLevel;
  removal?: RemovalPolicy;
}

export class ListenApi extends Construct {
  readonly connections: Table;
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
  readonly handler: ServiceFunction;
  readonly authorizer: ServiceFunction;

  constructor(scope: Construct, id: string, props: ListenApiProps) {
    super(scope, id);
    this.connections = new Table(this, 'Connections', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: 'expires_at',
      // Connections are gone within 2 hours anyway: nothing here outlives the stack.
      removalPolicy: props.removal ?? RemovalPolicy.DESTROY,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: false },
    });
    this.handler = new ServiceFunction(this, 'listen', { name: 'listen', spec: LISTEN_SPEC, projectRoot: props.projectRoot, logLevel: props.logLevel });
    this.authorizer = new ServiceFunction(this, 'listenAuthorizer', { name: 'listenAuthorizer', spec: LISTEN_AUTHORIZER_SPEC, projectRoot: props.projectRoot, logLevel: props.logLevel });

    const integration = new WebSocketLambdaIntegration('Listen', this.handler.function);
    this.api = new WebSocketApi(this, 'Api', {
      apiName: `${Stack.of(this).stackName}-listen`,
      description: 'flowgate listen: deliveries pushed to developers\' listeners',
      connectRouteOptions: {
        integration,
        // Either header may carry the credential (Authorization or X-Api-Key): no identity source is
        // required by API Gateway, so the authorizer runs on every connect and decides itself.
        authorizer: new WebSocketLambdaAuthorizer('Credentials', this.authorizer.function, { identitySource: [] }),
      },
      disconnectRouteOptions: { integration },
      defaultRouteOptions: { integration },
    });
    this.stage = new WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: 'live',
      autoDeploy: true,
      // Listeners are developers' laptops: a few messages a second each is plenty.
      throttle: { rateLimit: 100, burstLimit: 200 },
    });

    // Connections: put at $connect, read by each message, deleted at $disconnect; answers (answer_from_listener): kept by a conditional update.
    Grant.addToPrincipal({ grantee: this.handler, actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'], resourceArns: [this.connections.tableArn] });
    this.grantPosting(this.handler);
    this.giveEndpoint(this.handler);

    for (const route of [this.api.node.findChild('$disconnect-Route'), this.api.node.findChild('$default-Route')]) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason: 'API Gateway authorizes a WebSocket connection once, at $connect (its authorizer runs the gateway\'s credential check); later messages of that connection cannot carry an authorizer, and the listen function checks each answer against the triggers the connection was let in for.',
      });
    }
    Validations.of(this.stage).acknowledge({
      id: 'AwsSolutions-APIG1',
      reason: 'Each connect, message and push is logged by the listen and webhook functions (their own log groups); stage access logs would repeat them at a cost per message.',
    });
    Validations.of(this.connections).acknowledge({
      id: 'AwsSolutions-DDB3',
      reason: 'Connections live at most 2 hours and are made again by the CLI on reconnecting: nothing in this table is worth restoring.',
    });
    new CfnOutput(this, 'Url', { value: this.stage.url, description: 'The listen endpoint: flowgate login --listen-url <ListenUrl>' });
  }

  /**
   * The receiver pushes: finds a trigger's connections (Query), posts to them and forgets gone ones;
   * waits for a listener's answer (GetItem) and closes the wait (UpdateItem).
   */
  connectPusher(fn: ServiceFunction): void {
    Grant.addToPrincipal({ grantee: fn, actions: ['dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], resourceArns: [this.connections.tableArn] });
    this.grantPosting(fn);
    this.giveEndpoint(fn);
  }

  /** `execute-api:ManageConnections` on this stage's `POST @connections` only: the connection ids are known only at run time. */
  private grantPosting(fn: ServiceFunction): void {
    const resource = Stack.of(this).formatArn({ service: 'execute-api', resource: this.api.apiId, resourceName: `${this.stage.stageName}/POST/@connections/*` });
    Grant.addToPrincipal({ grantee: fn, actions: ['execute-api:ManageConnections'], resourceArns: [resource] });
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${Stack.of(this).getLogicalId(this.api.node.defaultChild as never)}>/live/POST/@connections/*]`,
      reason: 'A push goes to a connection API Gateway names when it opens (its id is only known at run time): the grant is this API\'s stage, POST to @connections only.',
    });
  }

  private giveEndpoint(fn: ServiceFunction): void {
    fn.addEnvironment(SETTINGS.listenConnectionsTable.env, this.connections.tableName);
    fn.addEnvironment(SETTINGS.listenCallbackUrl.env, this.stage.callbackUrl);
  }
}
