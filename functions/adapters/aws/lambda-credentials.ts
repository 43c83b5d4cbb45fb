/**
 * What the deployed bundles use in place of `@aws-sdk/credential-provider-node`, the SDK's default
 * credential chain (environment, SSO, shared ini files, credential_process, web identity, ECS and
 * EC2 instance metadata). `lib/constructs/esm-bundle.ts` aliases that package to this file,
 * so every client's `credentialDefaultProvider` becomes the environment alone.
 *
 * In Lambda the chain's first link always answers: the runtime puts the execution role's
 * credentials in `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime).
 * The rest never ran there, yet it was about a third of each bundle (its nested STS, SSO and
 * SSO-OIDC clients included), and without the environment it would try files and the network
 * before failing; this fails at once with the SDK's own `CredentialsProviderError`.
 *
 * Only `defaultProvider` is exported, the one name the clients import: should a newer client import
 * another, esbuild stops the build ("No matching export") rather than ship a bundle that breaks.
 * Tests and the local stack run the unbundled code, with the real chain and credentials in the
 * environment; test/infra/bundle-credentials.test.ts runs a bundle as deployed.
 */
import { fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';
import type { AwsCredentialIdentityProvider } from '@smithy/types';

/**
 * The chain's `defaultProvider`, environment only. Not memoised: the SDK calls the provider for
 * every request it signs, and reading three variables costs next to nothing (the chain kept
 * environment credentials, which carry no expiry, for good; reading them again loses nothing).
 */
export const defaultProvider = (init?: FromEnvInit): AwsCredentialIdentityProvider => fromEnv(init);
