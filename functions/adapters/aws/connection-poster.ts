import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { AwsClients } from './clients.js';
import { signedPoster } from './signed-request.js';

/** Posts to a connection through the management API; false when the connection is gone (410). */
export type PostToConnection = (connectionId: string, text: string) => Promise<boolean>;

/**
 * API Gateway's management API (`POST @connections/{id}`), called with a request signed here
 * rather than through `@aws-sdk/client-apigatewaymanagementapi`: that client speaks REST-JSON,
 * and esbuild's code splitting put the protocol code it shares with the DynamoDB client into a
 * chunk the receiver loads at init, which took the receiver's bundle over its 300 KB budget
 * (280,977 → 301,847 bytes). The request is signed as `signed-request.ts` does it.
 *
 * The region is the caller's, or else the one the callback URL names
 * (`https://{api-id}.execute-api.{region}.amazonaws.com/{stage}`), as the stack's output gives it.
 *
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-how-to-call-websocket-api-connections.html
 */
export function managementPoster(
  callbackUrl: string,
  options: { region?: string; credentials?: AwsCredentialIdentityProvider; attempts?: number } = {},
): PostToConnection {
  const base = new URL(callbackUrl.endsWith('/') ? callbackUrl : `${callbackUrl}/`);
  const region = options.region ?? regionOf(base);
  const post = signedPoster({ service: 'execute-api', region, ...(options.credentials && { credentials: options.credentials }) });
  const attempts = options.attempts ?? 3;
  return async (connectionId, text) => {
    const url = new URL(`@connections/${encodeURIComponent(connectionId)}`, base);
    const body = Buffer.from(text, 'utf8');
    for (let attempt = 1; ; attempt++) {
      const response = await post(url, body, { 'content-type': 'application/octet-stream' });
      if (response.status >= 200 && response.status < 300) return true;
      if (response.status === 410) return false;
      // Throttled or failed on API Gateway's side: tried again, as the SDK's client would.
      const retryable = response.status === 429 || response.status >= 500;
      if (!retryable || attempt >= attempts) throw new Error(`posting to connection ${connectionId} answered ${response.status}`);
      await new Promise((done) => setTimeout(done, 50 * 2 ** attempt));
    }
  };
}

/**
 * The management API poster of a composition: the stage's callback URL (locally the emulator's,
 * `local/listen-server.ts`), signed with the region and credentials of `aws` (in Lambda, its
 * environment's credentials and the URL's region).
 */
export function managementPosterFor(callbackUrl: string, aws: AwsClients): PostToConnection {
  const { region, credentials } = aws;
  return managementPoster(callbackUrl, { ...(region && { region }), ...(credentials && { credentials: async () => credentials }) });
}

/** The region of an API Gateway endpoint's host name. */
function regionOf(url: URL): string {
  const region = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(url.hostname)?.[1];
  if (!region) throw new Error(`no region given for ${url.origin}, and its host names none (expected {api-id}.execute-api.{region}.amazonaws.com)`);
  return region;
}
