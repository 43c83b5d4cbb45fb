import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** The AWS SDK clients a function uses, each created on first use and then shared. */
export interface AwsClients {
  readonly dynamo: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly sfn: SFNClient;
  readonly kms: KMSClient;
}

export interface AwsClientsConfig {
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Endpoints of local engines; unset, each client talks to AWS. */
  endpoints?: Partial<Record<'dynamodb' | 'sqs' | 'sfn' | 'kms', string>>;
}

/**
 * Creates the clients once per execution environment (or per local stack), each when first used,
 * so a function never pays for a client it does not call. Without a config, region and
 * credentials come from the environment, as Lambda provides them.
 */
export function createAwsClients(config: AwsClientsConfig = {}): AwsClients {
  const base = (service: keyof NonNullable<AwsClientsConfig['endpoints']>) => ({
    ...(config.region && { region: config.region }),
    ...(config.credentials && { credentials: config.credentials }),
    ...(config.endpoints?.[service] && { endpoint: config.endpoints[service] }),
  });
  const once = <T>(create: () => T) => {
    let client: T | undefined;
    return () => (client ??= create());
  };
  const dynamo = once(() => DynamoDBDocumentClient.from(new DynamoDBClient(base('dynamodb')), { marshallOptions: { removeUndefinedValues: true } }));
  const sqs = once(() => new SQSClient(base('sqs')));
  // StartSyncExecution is served from the `sync-` host prefix in AWS; against a local endpoint
  // that prefix would make an unresolvable host name, so it is only applied when talking to AWS.
  const sfn = once(() => new SFNClient({ ...base('sfn'), disableHostPrefix: Boolean(config.endpoints?.sfn) }));
  const kms = once(() => new KMSClient(base('kms')));
  return {
    get dynamo() { return dynamo(); },
    get sqs() { return sqs(); },
    get sfn() { return sfn(); },
    get kms() { return kms(); },
  };
}
