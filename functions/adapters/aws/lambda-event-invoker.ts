import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { WorkerInvoker } from '../../domain/flows/ports.js';
import type { AwsClients } from './clients.js';
import { signedPoster } from './signed-request.js';

/**
 * How long the receiver waits for Lambda to take an event before it sends it to the queue instead.
 * Lambda answers an asynchronous invocation in tens of milliseconds; one that answers after this
 * may still have taken it, and the event then runs twice (at least once, as with SQS).
 */
export const INVOKE_TIMEOUT_MS = 2_000;

/**
 * A function invoked asynchronously through Lambda's Invoke API (`X-Amz-Invocation-Type: Event`),
 * signed here rather than through `@aws-sdk/client-lambda`, which the receiver's 300 KB init budget
 * has no room for (see `connection-poster.ts` for the same choice). Lambda answers 202 once it has
 * queued the event internally, durably; any other answer (throttled 429, refused 4xx, 5xx) or a
 * network failure throws, and the caller hands the event to the flow queue instead.
 * https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
 */
export class LambdaEventInvoker implements WorkerInvoker {
  private readonly url: URL;
  private readonly post;

  /**
   * @param functionArn the function's ARN (`arn:aws:lambda:{region}:{account}:function:{name}`),
   * which also names the region; `endpoint` replaces `https://lambda.{region}.amazonaws.com`.
   */
  constructor(functionArn: string, options: { endpoint?: string; region?: string; credentials?: AwsCredentialIdentityProvider } = {}) {
    const region = options.region ?? /^arn:aws[a-z-]*:lambda:([a-z0-9-]+):/.exec(functionArn)?.[1];
    if (!region) throw new Error(`no region given for ${functionArn}, and it names none (expected arn:aws:lambda:{region}:{account}:function:{name})`);
    const base = options.endpoint ?? `https://lambda.${region}.amazonaws.${region.startsWith('cn-') ? 'com.cn' : 'com'}`;
    this.url = new URL(`/2015-03-31/functions/${encodeURIComponent(functionArn)}/invocations`, base);
    this.post = signedPoster({ service: 'lambda', region, timeoutMs: INVOKE_TIMEOUT_MS, ...(options.credentials && { credentials: options.credentials }) });
  }

  async invoke(body: string): Promise<void> {
    const response = await this.post(this.url, Buffer.from(body, 'utf8'), { 'content-type': 'application/json', 'x-amz-invocation-type': 'Event' });
    if (response.status !== 202) throw new Error(`Lambda Invoke answered ${response.status}: ${response.text.slice(0, 200)}`);
  }
}

/** The invoker of a composition: the region, credentials and (locally) the Lambda endpoint of `aws`. */
export function lambdaEventInvokerFor(functionArn: string, aws: AwsClients): LambdaEventInvoker {
  const { region, credentials } = aws;
  return new LambdaEventInvoker(functionArn, {
    ...(aws.endpoints?.lambda && { endpoint: aws.endpoints.lambda }),
    ...(region && { region }),
    ...(credentials && { credentials: async () => credentials }),
  });
}
