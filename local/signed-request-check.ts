import type { IncomingMessage } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from '../functions/adapters/aws/node-sha256.js';
import { equalText } from '../functions/domain/webhooks/senders/primitives/equal-text.js';

/**
 * How far a request's signing time (`X-Amz-Date`) may be from the emulator's clock, as AWS's
 * services allow it: a signed request captured on the way (or written to a log) stops being
 * accepted once this has passed, where it could otherwise be sent again for ever.
 */
export const MAX_SIGNATURE_SKEW_MS = 5 * 60 * 1000;

/**
 * Checks a request to one of the local stack's emulated AWS APIs (Lambda's Invoke, API Gateway's
 * management API) as the service does, header-signed with Signature Version 4: the stack's key,
 * a signing time within {@link MAX_SIGNATURE_SKEW_MS}, and the signature made again with the
 * stack's secret over the method, the path as sent (which the signer encodes once more, as AWS
 * does for every service but S3), the signed headers and the body, compared in constant time.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html
 */
export function signedRequestCheck(options: { region: string; service: string; credentials: { accessKeyId: string; secretAccessKey: string } }) {
  const signer = new SignatureV4({ credentials: options.credentials, region: options.region, service: options.service, sha256: NodeSha256 });
  return async (req: IncomingMessage, path: string, body: Buffer): Promise<boolean> => {
    const authorization = String(req.headers.authorization ?? '');
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';') ?? [];
    const dateMatch = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
    if (!dateMatch || !authorization.includes(`Credential=${options.credentials.accessKeyId}/`)) return false;
    const [, y, mo, d, h, mi, s] = dateMatch;
    const signingDate = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
    if (!(Math.abs(Date.now() - signingDate.getTime()) <= MAX_SIGNATURE_SKEW_MS)) return false;
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) if (req.headers[name] !== undefined) headers[name] = String(req.headers[name]);
    const [hostname, port] = (req.headers.host ?? '').split(':');
    const signed = await signer.sign({
      method: req.method ?? 'GET', protocol: 'http:', hostname: hostname!, ...(port && { port: Number(port) }), path, headers, body, query: {},
    }, { signingDate });
    return equalText(authorization, String(signed.headers.authorization ?? ''));
  };
}
