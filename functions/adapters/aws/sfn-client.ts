import { SFNClient } from '@aws-sdk/client-sfn';

/**
 * Created once per execution environment. StartSyncExecution is served from the `sync-` host
 * prefix in AWS; against a local endpoint (`AWS_ENDPOINT_URL_SFN`) that prefix would make an
 * unresolvable host name, so it is only applied when talking to AWS itself.
 */
export const sfnClient = new SFNClient({ disableHostPrefix: Boolean(process.env.AWS_ENDPOINT_URL_SFN) });
