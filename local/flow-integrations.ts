import * as dynamodb from '@aws-sdk/client-dynamodb';
import * as sqs from '@aws-sdk/client-sqs';

/**
 * Step Functions' service integrations that the local stack has an engine for: DynamoDB
 * (dynalite) and SQS (local-aws-sqs). Both the optimized form (`arn:aws:states:::dynamodb:putItem`)
 * and the AWS SDK form (`arn:aws:states:::aws-sdk:dynamodb:putItem`) call the engine through the
 * AWS SDK with the state's parameters as they are (PascalCase, DynamoDB values typed as
 * `{"S": ...}`), and answer the API's response. A service error fails the Task with Step
 * Functions' name for it: `DynamoDB.<Exception>` / `SQS.<Exception>` for the optimized form,
 * `DynamoDb.<Exception>` / `Sqs.<Exception>` (service name in PascalCase) for the SDK form.
 */
const SERVICES = {
  dynamodb: { module: dynamodb as unknown as Record<string, unknown>, Client: dynamodb.DynamoDBClient, optimized: ['getItem', 'putItem', 'updateItem', 'deleteItem'], errorPrefix: { optimized: 'DynamoDB', sdk: 'DynamoDb' } },
  sqs: { module: sqs as unknown as Record<string, unknown>, Client: sqs.SQSClient, optimized: ['sendMessage'], errorPrefix: { optimized: 'SQS', sdk: 'Sqs' } },
} as const;
type Service = keyof typeof SERVICES;

/** Where the local engines listen. */
export type EngineEndpoints = Record<Service, string>;

export interface LocalIntegration {
  service: Service;
  /** The API action in camelCase, as the resource names it. */
  action: string;
  form: 'optimized' | 'sdk';
}

/** The integration a Task resource names, if the local stack has an engine for it. */
export function localIntegration(resource: string): LocalIntegration | undefined {
  const match = /^arn:aws:states:::(aws-sdk:)?([a-z0-9]+):([A-Za-z]+)$/.exec(resource);
  if (!match) return undefined;
  const [, sdk, service, action] = match;
  if (!(service! in SERVICES)) return undefined;
  const spec = SERVICES[service as Service];
  if (!sdk && !(spec.optimized as readonly string[]).includes(action!)) return undefined;
  return { service: service as Service, action: action!, form: sdk ? 'sdk' : 'optimized' };
}

type Send = (command: unknown) => Promise<Record<string, unknown>>;
const clients = new Map<string, Send>();
function clientFor(service: Service, endpoint: string): Send {
  const key = `${service} ${endpoint}`;
  let send = clients.get(key);
  if (!send) {
    const client = new SERVICES[service].Client({
      endpoint,
      // The embedded engines accept any signature (local/engines.ts).
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    send = (command) => (client as unknown as { send: Send }).send(command);
    clients.set(key, send);
  }
  return send;
}

/**
 * Calls the integration on its local engine.
 * @throws an Error whose name is Step Functions' error name for what the engine answered.
 */
export async function callLocalIntegration(integration: LocalIntegration, endpoints: EngineEndpoints, parameters: unknown): Promise<unknown> {
  const spec = SERVICES[integration.service];
  const commandName = `${integration.action[0]!.toUpperCase()}${integration.action.slice(1)}Command`;
  const Command = spec.module[commandName] as (new (input: unknown) => unknown) | undefined;
  const prefix = spec.errorPrefix[integration.form];
  if (typeof Command !== 'function') throw named(`${prefix}.UnknownOperationException`, `${integration.service} has no action ${integration.action}`);
  try {
    const { $metadata: _, ...output } = await clientFor(integration.service, endpoints[integration.service])(new Command(parameters ?? {}));
    return output;
  } catch (error) {
    const failure = error as Error;
    const name = failure.name.endsWith('Exception') ? failure.name : `${failure.name}Exception`;
    throw named(`${prefix}.${name}`, failure.message);
  }
}

function named(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}
