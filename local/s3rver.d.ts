declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    /** Where buckets and objects are kept (s3rver has only a file system store). */
    directory: string;
    resetOnClose?: boolean;
    /** Whether a host name other than an IP or localhost names a bucket (default true). */
    vhostBuckets?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    /** Its file store (`s3rver/lib/stores/filesystem.js`), shared by every request. */
    store: { getBucketPath(bucket: string): string; getResourcePath(bucket: string, key?: string, resource?: string): string };
    /** Koa's middleware list (s3rver is a Koa app), composed when `run` starts listening. */
    middleware: ((ctx: any, next: () => Promise<void>) => Promise<void>)[];
    /** The HTTP server `run` started. */
    httpServer: import('node:http').Server;
  }
}
declare module 's3rver/lib/models/error.js' {
  /** An S3 error answer: its code (which sets the HTTP status) and message, written as S3's XML. */
  export default class S3Error extends Error {
    constructor(code: string, message?: string, detail?: Record<string, string>);
    readonly code: string;
    status: number;
  }
}
declare module 's3rver/lib/models/account.js' {
  /** The one account s3rver signs requests for; more key pairs may be added to it. */
  export const DUMMY_ACCOUNT: { createKeyPair(accessKeyId: string, secretAccessKey: string): void };
}
declare module 's3rver/lib/models/object.js' {
  /** An object as s3rver's store takes it: its key in the bucket, its bytes and its HTTP metadata (`content-type`…). */
  export default class S3Object {
    constructor(bucket: string, key: string, content: Buffer | null, metadata: Record<string, string>);
  }
}
declare module 's3rver/lib/stores/filesystem.js' {
  import type S3Object from 's3rver/lib/models/object.js';
  /** s3rver's one store: each object is a file under `<directory>/<bucket>/`, with its MD5 and metadata beside it. */
  export default class FilesystemStore {
    constructor(directory: string);
    putObject(object: S3Object): Promise<{ size: number; md5: string }>;
    getMetadata(bucket: string, key: string): Promise<Record<string, string | number>>;
  }
}
