import { fromEnv } from '@aws-sdk/credential-provider-env';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { NodeSha256 } from './node-sha256.js';

/** POSTs `body` to an AWS endpoint, signed (SigV4) for `service` in `region`; answers the response, its body read. */
export type SignedPost = (url: URL, body: Buffer, headers: Record<string, string>) => Promise<{ status: number; text: string }>;

/**
 * A SigV4-signed POST made with `fetch`, for the few AWS calls a function makes without the service's
 * SDK client (whose protocol code would load at init, or outgrow the bundle's budget): the signer is
 * the SDK's own (`@smithy/signature-v4`), already in every bundle; credentials come from the
 * environment, as Lambda gives them, unless given.
 */
export function signedPoster(options: { service: string; region: string; credentials?: AwsCredentialIdentityProvider; timeoutMs?: number }): SignedPost {
  const signer = new SignatureV4({ credentials: options.credentials ?? fromEnv(), region: options.region, service: options.service, sha256: NodeSha256 });
  return async (url, body, headers) => {
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port && { port: Number(url.port) }),
      // The path as sent (percent-encoded), which the signer encodes once more: SigV4's canonical URI
      // encodes each segment of the request's path twice for every service but S3, as the SDK signs it.
      // Signed decoded, an encoded character (an ARN's `:`, a connection id's `=`) made AWS refuse it.
      // https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html
      path: url.pathname,
      headers: { host: url.host, ...headers },
      body,
      query: {},
    });
    const response = await fetch(url, { method: 'POST', headers: signed.headers as Record<string, string>, body, ...(options.timeoutMs !== undefined && { signal: AbortSignal.timeout(options.timeoutMs) }) });
    return { status: response.status, text: await response.text() };
  };
}
