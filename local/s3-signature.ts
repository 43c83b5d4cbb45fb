import { timingSafeEqual } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from '../functions/adapters/aws/node-sha256.js';

/** A key pair the local S3 engine knows. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** A request as it reached the engine: the path and query exactly as sent, the headers as Node lower-cased them. */
export interface ReceivedRequest {
  method: string;
  /** The path as sent, still percent-encoded: S3 signs it so (the SDK's S3 signer does not encode it again). */
  rawPath: string;
  /** What follows `?`, as sent. */
  rawQuery: string;
  headers: Record<string, string | string[] | undefined>;
}

/** Why a request is refused, as S3 words it: its error code and a message. */
export interface Refusal {
  code: string;
  message: string;
}

export interface VerifyOptions {
  /** The key pair of an access key id, or undefined when it is unknown. */
  credentialsOf(accessKeyId: string): S3Credentials | undefined;
  region: string;
  now: number;
}

/** How far a header-signed request's `x-amz-date` may be from the engine's clock, as S3 allows. */
export const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
/** The longest `X-Amz-Expires` S3 takes: seven days. */
export const MAX_PRESIGNED_EXPIRES_SECONDS = 7 * 24 * 3600;

const ALGORITHM = 'AWS4-HMAC-SHA256';
const SIGNATURE_PARAM = 'X-Amz-Signature';
const CONTENT_SHA256 = 'x-amz-content-sha256';
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

const refuse = (code: string, message: string): Refusal => ({ code, message });
const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The query as name → value(s), decoded once, in the order sent; undefined when a part is not valid percent-encoding. */
function parseQuery(rawQuery: string): Record<string, string | string[]> | undefined {
  const query: Record<string, string | string[]> = {};
  try {
    for (const pair of rawQuery.split('&')) {
      if (pair === '') continue;
      const at = pair.indexOf('=');
      const decode = (text: string) => decodeURIComponent(text.replace(/\+/g, ' '));
      const name = decode(at === -1 ? pair : pair.slice(0, at));
      const value = at === -1 ? '' : decode(pair.slice(at + 1));
      const known = query[name];
      query[name] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value];
    }
  } catch {
    return undefined;
  }
  return query;
}

/** `yyyymmddThhmmssZ` as a date; undefined when it is not one. */
function parseAmzDate(text: string | undefined): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? '');
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const date = new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const headerText = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(',') : value ?? '');

/** The signed headers' values as received, by lower-case name. */
function signedHeaderValues(request: ReceivedRequest, names: string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, headerText(request.headers[name])]));
}

interface Scope {
  credentials: S3Credentials;
  signingDate: Date;
  region: string;
}

/**
 * The credential scope `<key id>/<yyyymmdd>/<region>/s3/aws4_request` checked against what the
 * engine knows: the key id, its one region, the S3 service, and the day of the request's date.
 */
function checkScope(credential: string | undefined, amzDate: string | undefined, options: VerifyOptions, where: string): Scope | Refusal {
  const parts = (credential ?? '').split('/');
  const signingDate = parseAmzDate(amzDate);
  if (parts.length !== 5 || !signingDate) return refuse('AuthorizationHeaderMalformed', `The ${where} is malformed: it needs a credential <key id>/<date>/<region>/s3/aws4_request and an X-Amz-Date`);
  const [accessKeyId, day, region, service, terminator] = parts as [string, string, string, string, string];
  const credentials = options.credentialsOf(accessKeyId);
  if (!credentials) return refuse('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  if (service !== 's3' || terminator !== 'aws4_request' || day !== amzDate!.slice(0, 8)) return refuse('AuthorizationHeaderMalformed', `The ${where} is malformed: its credential scope must be <date of X-Amz-Date>/${options.region}/s3/aws4_request`);
  if (region !== options.region) return refuse('AuthorizationHeaderMalformed', `The ${where} is malformed; the region '${region}' is wrong; expecting '${options.region}'`);
  return { credentials, signingDate, region };
}

const signerFor = (scope: Scope) =>
  // uriEscapePath false: S3 signs the path as sent, as the SDK's S3 client and presigner do.
  new SignatureV4({ credentials: scope.credentials, region: scope.region, service: 's3', sha256: NodeSha256, uriEscapePath: false, applyChecksum: true });

/** A header-signed request (`Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`). */
async function verifyHeaderSigned(request: ReceivedRequest, query: Record<string, string | string[]>, options: VerifyOptions): Promise<Refusal | undefined> {
  const authorization = headerText(request.headers.authorization);
  if (!authorization.startsWith(`${ALGORITHM} `)) return refuse('InvalidRequest', `The authorization mechanism you have provided is not supported. Please use ${ALGORITHM}.`);
  const fields = Object.fromEntries(authorization.slice(ALGORITHM.length + 1).split(',').map((field) => {
    const at = field.indexOf('=');
    return [field.slice(0, at).trim(), field.slice(at + 1).trim()];
  }));
  const provided = fields.Signature;
  const signedNames = (fields.SignedHeaders ?? '').split(';').filter(Boolean);
  if (!provided || signedNames.length === 0 || !signedNames.includes('host')) return refuse('AuthorizationHeaderMalformed', 'The authorization header is malformed: it needs Credential, SignedHeaders (host among them) and Signature');
  const amzDate = headerText(request.headers['x-amz-date']);
  const scope = checkScope(fields.Credential, amzDate, options, 'authorization header');
  if ('code' in scope) return scope;
  if (Math.abs(options.now - scope.signingDate.getTime()) > MAX_CLOCK_SKEW_MS) return refuse('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  const signed = await signerFor(scope).sign(
    { method: request.method, protocol: 'http:', hostname: '', path: request.rawPath, query, headers: signedHeaderValues(request, signedNames) },
    { signingDate: scope.signingDate, signableHeaders: new Set(signedNames) },
  );
  const expected = /Signature=([0-9a-f]+)$/.exec(String(signed.headers.authorization))?.[1] ?? '';
  return sameText(provided, expected) ? undefined : refuse('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
}

/** A presigned URL (`X-Amz-Algorithm`, `X-Amz-Credential`, … `X-Amz-Signature` in the query). */
async function verifyPresigned(request: ReceivedRequest, query: Record<string, string | string[]>, options: VerifyOptions): Promise<Refusal | undefined> {
  const param = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  const provided = param(SIGNATURE_PARAM);
  const expires = Number(param('X-Amz-Expires'));
  const signedNames = (param('X-Amz-SignedHeaders') ?? '').split(';').filter(Boolean);
  if (param('X-Amz-Algorithm') !== ALGORITHM || !provided || !Number.isSafeInteger(expires) || expires < 1 || expires > MAX_PRESIGNED_EXPIRES_SECONDS || !signedNames.includes('host')) {
    return refuse('AuthorizationQueryParametersError', `A presigned URL needs X-Amz-Algorithm=${ALGORITHM}, X-Amz-Credential, X-Amz-Date, X-Amz-Expires (1 to ${MAX_PRESIGNED_EXPIRES_SECONDS} seconds), X-Amz-SignedHeaders (host among them) and X-Amz-Signature, each once`);
  }
  const scope = checkScope(param('X-Amz-Credential'), param('X-Amz-Date'), options, 'X-Amz-Credential parameter');
  if ('code' in scope) return scope;
  if (options.now > scope.signingDate.getTime() + expires * 1000) return refuse('AccessDenied', 'Request has expired');
  if (scope.signingDate.getTime() - options.now > MAX_CLOCK_SKEW_MS) return refuse('AccessDenied', 'Request is not valid yet');

  const headers = signedHeaderValues(request, signedNames);
  const unhoistable = new Set(signedNames);
  const unsignable = new Set<string>();
  // The payload hash of a presigned URL is UNSIGNED-PAYLOAD unless its query names one (the SDK's
  // presigner puts X-Amz-Content-Sha256 there). The signer reads it from a header: one named as the
  // query names it goes back to the query as it was; otherwise it stays a header, and unsigned.
  const queryHash = Object.keys(query).find((name) => name.toLowerCase() === CONTENT_SHA256);
  if (queryHash !== undefined) headers[queryHash] = headerText(query[queryHash]);
  else if (!signedNames.includes(CONTENT_SHA256)) {
    headers[CONTENT_SHA256] = UNSIGNED_PAYLOAD;
    unhoistable.add(CONTENT_SHA256);
    unsignable.add(CONTENT_SHA256);
  }
  const { [SIGNATURE_PARAM]: _signature, ...unsigned } = query;
  const presigned = await signerFor(scope).presign(
    { method: request.method, protocol: 'http:', hostname: '', path: request.rawPath, query: unsigned, headers },
    { signingDate: scope.signingDate, expiresIn: expires, signableHeaders: new Set(signedNames), unhoistableHeaders: unhoistable, unsignableHeaders: unsignable },
  );
  return sameText(provided, String(presigned.query?.[SIGNATURE_PARAM] ?? '')) ? undefined : refuse('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
}

/**
 * Checks a request's Signature Version 4 as S3 does, header-signed or presigned: the credential's
 * key, region and service, the time (15 minutes of skew; a presigned URL's expiry), and the
 * signature over the method, path, query and signed headers, recomputed by the AWS SDK's own
 * signer (`@smithy/signature-v4`) and compared in constant time. Answers undefined when it holds.
 * What it does not check: the payload hash a header-signed request declares (`x-amz-content-sha256`)
 * against its body, and the chunk signatures of `aws-chunked` uploads.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-authenticating-requests.html
 */
export async function verifySignatureV4(request: ReceivedRequest, options: VerifyOptions): Promise<Refusal | undefined> {
  const query = parseQuery(request.rawQuery);
  if (!query) return refuse('InvalidArgument', 'The query string is not valid percent-encoding');
  const byHeader = request.headers.authorization !== undefined;
  const byQuery = 'X-Amz-Algorithm' in query || 'X-Amz-Signature' in query || 'Signature' in query;
  if (byHeader && byQuery) return refuse('InvalidArgument', 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified');
  if (byHeader) return verifyHeaderSigned(request, query, options);
  if (byQuery) return verifyPresigned(request, query, options);
  return refuse('AccessDenied', 'Access Denied: the local S3 engine serves only requests signed with Signature Version 4 by the local stack\'s credentials');
}
