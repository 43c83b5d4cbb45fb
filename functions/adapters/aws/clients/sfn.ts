import { SFNClient } from '@aws-sdk/client-sfn';
import { clientOptions, oncePerConfig } from '../clients.js';

/**
 * StartSyncExecution is served from the `sync-` host prefix in AWS; against a local endpoint that
 * prefix would make an unresolvable host name, so it is only applied when talking to AWS itself.
 */
export const sfnClient = oncePerConfig((aws) => new SFNClient({
  ...clientOptions(aws, 'sfn'),
  disableHostPrefix: Boolean(aws.endpoints?.sfn),
}));
