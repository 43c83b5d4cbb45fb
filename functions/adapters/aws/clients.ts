/**
 * Which AWS the SDK clients of one execution environment talk to: in Lambda an empty config
 * (region and credentials from the environment), on the local stack its engines. Each client is
 * created once per config, when first asked for (`clients/*.ts`, one module per service, so a
 * bundle holds only the clients its function uses).
 */
export interface AwsClientsConfig {
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Endpoints of local engines; unset, each client talks to AWS. */
  endpoints?: Partial<Record<AwsService, string>>;
}
export type AwsService = 'dynamodb' | 'sqs' | 'sfn' | 'kms' | 's3' | 'lambda';
/** The handle functions are composed with; its identity keys the clients made for it. */
export type AwsClients = Readonly<AwsClientsConfig>;

/** A new handle: one per execution environment, or per local stack. */
export const createAwsClients = (config: AwsClientsConfig = {}): AwsClients => ({ ...config });

/** Constructor options of the `service` client under this config. */
export const clientOptions = (aws: AwsClients, service: AwsService) => ({
  ...(aws.region && { region: aws.region }),
  ...(aws.credentials && { credentials: aws.credentials }),
  ...(aws.endpoints?.[service] && { endpoint: aws.endpoints[service] }),
});

const created = new WeakMap<AwsClients, { destroy(): void }[]>();

/** A client getter that makes its client on the first call for a config and keeps it. */
export function oncePerConfig<T extends { destroy(): void }>(create: (aws: AwsClients) => T): (aws: AwsClients) => T {
  const clients = new WeakMap<AwsClients, T>();
  return (aws) => {
    let client = clients.get(aws);
    if (!client) {
      client = create(aws);
      clients.set(aws, client);
      created.set(aws, [...(created.get(aws) ?? []), client]);
    }
    return client;
  };
}

/** Closes every client made for this config (a local stack stopping). */
export function destroyAwsClients(aws: AwsClients): void {
  for (const client of created.get(aws) ?? []) client.destroy();
  created.delete(aws);
}
