import { resolve, sep } from 'node:path';
import S3Error from 's3rver/lib/models/error.js';
import { verifySignatureV4, type S3Credentials } from './s3-signature.js';

/**
 * What s3rver (S3 on the local stack) is shielded from, first in its middleware: s3rver keeps each
 * object as files named after its key under `<directory>/<bucket>/`, serves unsigned and wrongly
 * signed requests, and joins query values into file paths. Upstream: s3rver never verifies a
 * Signature Version 4 (https://github.com/jamhall/s3rver/issues/659; its V4 support, added by
 * https://github.com/jamhall/s3rver/pull/419, lists "verification of a provided signature" as not
 * implemented), and a key segment longer than the file system's NAME_MAX failed its write with an
 * ENAMETOOLONG that stopped the process (`patches/s3rver+3.7.1+003+hardening.patch`).
 */

/** The longest file name the file systems the local stack runs on take (NAME_MAX), in bytes. */
export const MAX_FILE_NAME_BYTES = 255;
/** The longest suffix s3rver adds to a key's last segment (`<segment>._S3rver_metadata.json`). */
const LONGEST_S3RVER_SUFFIX = '._S3rver_metadata.json';
/** The longest last segment of a key the engine can store. */
export const MAX_LAST_SEGMENT_BYTES = MAX_FILE_NAME_BYTES - LONGEST_S3RVER_SUFFIX.length;
/** S3's own limit on a key, in UTF-8 bytes. */
export const MAX_S3_KEY_BYTES = 1024;
/** Part numbers S3 takes. */
const MAX_PART_NUMBER = 10_000;
/** s3rver's upload ids: 16 random bytes in hex. Anything else names no upload, and never a path. */
const UPLOAD_ID = /^[0-9a-f]{32}$/;
/** S3's bucket naming rules (3-63 lower-case letters, digits, `.`, `-`; no `..`). */
const BUCKET_NAME = /^(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Where a request points: its bucket and key as s3rver's router decodes them (path-style only). */
interface Target {
  bucket?: string;
  key?: string;
}

function targetOf(rawPath: string): Target {
  const [, bucket, ...rest] = rawPath.split('/');
  try {
    return { ...(bucket && { bucket: decodeURIComponent(bucket) }), ...(rest.length > 0 && rest.join('/') !== '' && { key: decodeURIComponent(rest.join('/')) }) };
  } catch {
    throw new S3Error('InvalidURI', 'Couldn\'t parse the specified URI.');
  }
}

function checkBucket(bucket: string): void {
  if (!BUCKET_NAME.test(bucket)) throw new S3Error('InvalidBucketName', 'The specified bucket is not valid.', { BucketName: bucket });
}

/** Why the engine cannot store a key, or undefined when it can. */
function unstorable(key: string): S3Error | undefined {
  if (bytes(key) > MAX_S3_KEY_BYTES) return new S3Error('KeyTooLongError', 'Your key is too long');
  const segments = key.split('/');
  if (key.includes('\u0000') || segments.some((segment) => segment === '.' || segment === '..')) {
    return new S3Error('InvalidArgument', 'The local S3 engine stores a key as a file path: it takes no NUL and no . or .. segment');
  }
  const last = segments.pop()!;
  if (segments.some((segment) => bytes(segment) > MAX_FILE_NAME_BYTES) || bytes(last) > MAX_LAST_SEGMENT_BYTES) {
    // S3 takes any segment of a key up to 1,024 bytes; this engine's file system does not.
    return new S3Error('KeyTooLongError', `Your key is too long for the local S3 engine, which keeps each object as files named after its key: each /-separated segment may be at most ${MAX_FILE_NAME_BYTES} bytes, the last at most ${MAX_LAST_SEGMENT_BYTES} (S3 takes keys of up to ${MAX_S3_KEY_BYTES} bytes)`);
  }
  return undefined;
}

/** The key's files stay in the bucket's folder: a last check, after `unstorable`, on the path as s3rver joins it. */
function checkInside(directory: string, bucket: string, key: string): void {
  const bucketDir = resolve(directory, bucket);
  if (!resolve(bucketDir, ...key.split('/')).startsWith(bucketDir + sep)) throw new S3Error('InvalidArgument', 'The key leaves its bucket');
}

/** `x-amz-copy-source`: `[/]<bucket>/<key>[?versionId=…]`, percent-encoded. */
function copySourceOf(header: string): Target {
  const path = header.split('?')[0]!;
  return targetOf(path.startsWith('/') ? path : `/${path}`);
}

/** The query values s3rver joins into file paths: a part number 1..10,000 and an upload id of its own making. */
function checkQuery(query: Record<string, string | string[] | undefined>): void {
  const one = (name: string) => {
    const value = query[name];
    if (Array.isArray(value)) throw new S3Error('InvalidArgument', `${name} may be given once`, { ArgumentName: name });
    return value;
  };
  const partNumber = one('partNumber');
  if (partNumber !== undefined && !(/^[1-9]\d{0,4}$/.test(partNumber) && Number(partNumber) <= MAX_PART_NUMBER)) {
    throw new S3Error('InvalidArgument', `Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`, { ArgumentName: 'partNumber', ArgumentValue: partNumber });
  }
  const uploadId = one('uploadId');
  if (uploadId !== undefined && !UPLOAD_ID.test(uploadId)) {
    throw new S3Error('NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.', { UploadId: uploadId });
  }
}

/** File system failures as S3 answers: what a request made the engine's files do never stops the stack nor reads as a 500 without cause. */
function fromFileSystem(error: unknown): unknown {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENAMETOOLONG':
      return new S3Error('KeyTooLongError', 'Your key is too long for the local S3 engine\'s file system');
    case 'EISDIR':
    case 'ENOTDIR':
    case 'EEXIST':
      return new S3Error('InvalidArgument', 'The local S3 engine keeps objects as files named after their keys, and this key collides with the files of another');
    case 'ENOSPC':
      return new S3Error('ServiceUnavailable', 'The disk holding the local S3 engine\'s objects is full');
    default:
      return error;
  }
}

/** The two methods through which s3rver's file store turns a bucket and a key into a path. */
interface PathsOfStore {
  getBucketPath(bucket: string): string;
  getResourcePath(bucket: string, key?: string, resource?: string): string;
}

/**
 * Makes s3rver's file store refuse any path outside its bucket's folder, whatever named it: the
 * guard checks what a request's path, query and headers name, and this what its body does
 * (the keys of a DeleteObjects) or anything the guard would miss. A refusal fails that request (400).
 */
export function confineStore(store: PathsOfStore, directory: string): void {
  const root = resolve(directory);
  const { getBucketPath, getResourcePath } = store;
  const outside = () => new S3Error('InvalidArgument', 'The key leaves its bucket');
  store.getBucketPath = function (bucket) {
    const path = resolve(getBucketPath.call(this, bucket));
    if (!path.startsWith(root + sep) || path.slice(root.length + 1).includes(sep)) throw outside();
    return path;
  };
  store.getResourcePath = function (bucket, key, resource) {
    const bucketDir = store.getBucketPath.call(this, bucket);
    const path = resolve(getResourcePath.call(this, bucket, key, resource));
    if (!path.startsWith(bucketDir + sep)) throw outside();
    return path;
  };
}

export interface S3GuardOptions {
  /** The key pairs requests may be signed with. */
  credentials: S3Credentials[];
  region: string;
  /** The engine's folder (s3rver's `directory`). */
  directory: string;
  now?: () => number;
}

/** The slice of Koa's context the guard reads and writes. */
interface KoaContext {
  method: string;
  path: string;
  querystring: string;
  query: Record<string, string | string[] | undefined>;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  body: unknown;
}

/**
 * A Koa middleware to put first in s3rver's stack (`engines.ts`): every request but a CORS
 * preflight must carry a valid Signature Version 4 (`s3-signature.ts`); a bucket, key, copy source,
 * part number or upload id that could not be a file under the bucket's folder is refused with S3's
 * error; and file system failures below become S3 errors. A preflight is answered by s3rver's CORS
 * rules, as S3 answers one, without credentials.
 */
export function s3Guard(options: S3GuardOptions) {
  const byKeyId = new Map(options.credentials.map((pair) => [pair.accessKeyId, pair]));
  const now = options.now ?? Date.now;
  return async function guard(ctx: KoaContext, next: () => Promise<void>): Promise<void> {
    const target = targetOf(ctx.path);
    if (ctx.method !== 'OPTIONS') {
      const refusal = await verifySignatureV4(
        { method: ctx.method, rawPath: ctx.path, rawQuery: ctx.querystring, headers: ctx.headers },
        { credentialsOf: (id) => byKeyId.get(id), region: options.region, now: now() },
      );
      if (refusal) throw new S3Error(refusal.code, refusal.message);
    }
    const copySource = typeof ctx.headers['x-amz-copy-source'] === 'string' ? copySourceOf(ctx.headers['x-amz-copy-source']) : undefined;
    for (const { bucket, key } of [target, ...(copySource ? [copySource] : [])]) {
      if (bucket !== undefined) checkBucket(bucket);
      if (bucket === undefined || key === undefined) continue;
      const problem = unstorable(key);
      if (problem) {
        // Reading or deleting a key the engine cannot hold finds nothing, as S3 would find nothing there.
        const reads = key === target.key && copySource === undefined && ctx.query.uploadId === undefined;
        if (reads && (ctx.method === 'GET' || ctx.method === 'HEAD')) throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: key });
        if (reads && ctx.method === 'DELETE') {
          ctx.status = 204;
          ctx.body = null;
          return;
        }
        throw problem;
      }
      checkInside(options.directory, bucket, key);
    }
    checkQuery(ctx.query);
    try {
      await next();
    } catch (error) {
      throw fromFileSystem(error);
    }
  };
}
