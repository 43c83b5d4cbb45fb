import { KMSClient } from '@aws-sdk/client-kms';

/** Created once per execution environment, when a secret is first sealed or opened (see `secret-box-from-env.ts`). */
export const kmsClient = new KMSClient({});
