import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { OBJECTS_CORS } from '../../functions/cors.js';
import { Construct } from 'constructs';
import { BUCKET_OPERATIONS, type BucketOperation } from '../../functions/manifest.js';
import type { ServiceFunction } from './service-function.js';

const LIST_BUCKET = 's3:ListBucket';

export interface ObjectStorageProps {
  /** `retain` keeps the bucket (and the objects) when the stack is deleted or the bucket replaced. */
  removal: 'retain' | 'destroy';
}

/** How long a multipart upload may sit unfinished before S3 removes its parts (they are billed meanwhile). */
export const ABORT_INCOMPLETE_UPLOADS_AFTER_DAYS = 1;

/**
 * The one S3 bucket that holds every object store's bytes, under `<store id>/<generation>/<key>`.
 * One bucket rather than one per store: buckets are a per-account quota and cost nothing idle.
 * Encrypted with S3 managed keys (as the tables use AWS managed keys: no KMS grant needed),
 * public access blocked, objects owned by the bucket (no ACLs), TLS only.
 */
export class ObjectStorage extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: ObjectStorageProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      lifecycleRules: [{ id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(ABORT_INCOMPLETE_UPLOADS_AFTER_DAYS) }],
      removalPolicy: props.removal === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      // CloudFormation deletes only an empty bucket: without this, `cdk destroy` with
      // `dataRemovalPolicy=destroy` stops at DELETE_FAILED on the first object. CDK's provider
      // function empties the bucket when (and only when) the stack deletes it.
      autoDeleteObjects: props.removal === 'destroy',
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'Server access logs are best-effort and would need a second bucket; who reads and writes objects is already decided and logged by the objects function, the only principal granted access.',
    });
  }

  /**
   * Lets pages of these origins use presigned URLs from a browser (`OBJECTS_CORS`): the console's
   * uploads and downloads, and apps of the gateway's CORS allowlist.
   */
  allowBrowserOrigins(origins: readonly string[]): void {
    this.bucket.addCorsRule({
      id: 'presigned-transfers-from-browsers',
      allowedOrigins: [...new Set(origins)],
      allowedMethods: OBJECTS_CORS.methods.map((method) => HttpMethods[method]),
      allowedHeaders: [...OBJECTS_CORS.headers],
      exposedHeaders: [...OBJECTS_CORS.expose],
      maxAge: OBJECTS_CORS.maxAgeSeconds,
    });
  }

  /**
   * Grants exactly the S3 actions of the operations the manifest lists, on the bucket's objects
   * only, but listing, on the bucket (never its configuration). The object ARN ends in `/*` because store ids
   * are random and made at run time.
   */
  connect(fn: ServiceFunction, operations: readonly BucketOperation[]): void {
    const actions = [...new Set(operations.map((operation) => BUCKET_OPERATIONS[operation]))];
    const onObjects = actions.filter((action) => action !== LIST_BUCKET);
    if (onObjects.length > 0) Grant.addToPrincipal({ grantee: fn, actions: onObjects, resourceArns: [this.bucket.arnForObjects('*')] });
    // Listing is an action on the bucket itself; only the sweeper lists (a generation's keys, by prefix).
    if (actions.includes(LIST_BUCKET)) Grant.addToPrincipal({ grantee: fn, actions: [LIST_BUCKET], resourceArns: [this.bucket.bucketArn] });
    Validations.of(fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>/*]`,
      reason: 'Object stores get random ids at run time, so the grant covers the bucket\'s objects (arn/*); the function adds each store\'s id and generation itself and checks the caller owns the store.',
    });
  }
}
