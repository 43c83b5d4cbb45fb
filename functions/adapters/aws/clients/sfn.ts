import { SFNClient } from '@aws-sdk/client-sfn';
import { clientOptions, oncePerConfig } from '../clients.js';

/**
 * StartSyncExecution is served from the `sync-` host prefix in AWS; against a local endpoint that
 * prefix would make an unresolvable host name, so it is only applied when talking to AWS itself.
 * The endpoint may also come the SDK's own way, from `AWS_ENDPOINT_URL_SFN` (a bundle run against
 * the local engines); Lambda never sets it.
 */
export const sfnClient = oncePerConfig((aws) => new SFNClient({
  ...clientOptions(aws, 'sfn'),
  disableHostPrefix: Boolean(aws.endpoints?.sfn ?? process.env.AWS_ENDPOINT_URL_SFN),
}));
