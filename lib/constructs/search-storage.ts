import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Bucket, CfnBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.js';

/** Where in the bucket the search indexes' files live; the search function may touch nothing else. */
export const SEARCH_PREFIX = 'search';

/**
 * What LanceDB needs of its commit table: the key schema of its DynamoDB commit store
 * (`base_uri` and `version`), and the calls it makes (read the latest version, write the next
 * conditionally). https://lancedb.github.io/lancedb/guides/storage/#s3-compatible-stores
 */
export const COMMIT_TABLE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'] as const;
/** The objects' actions LanceDB sends: read, write (new files only: a commit writes new files), list a table's files, delete (cleanup and the sweep). */
export const SEARCH_OBJECT_ACTIONS = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'] as const;

export interface SearchStorageProps {
  bucket: Bucket;
  removal: 'retain' | 'destroy';
}

/**
 * The search indexes' storage deployed: LanceDB's files under `search/` of the objects bucket, and
 * the DynamoDB table that serializes their commits (plain S3 cannot: concurrent writers lost
 * 1,200 of 3,000 rows in the probe, none with the commit table). Its URI is the search function's
 * `SEARCH_DATA_URI`.
 */
export class SearchStorage extends Construct {
  readonly commitTable: Table;
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: SearchStorageProps) {
    super(scope, id);
    this.bucket = props.bucket;
    const retain = props.removal === 'retain';
    this.commitTable = new Table(this, 'Commits', {
      partitionKey: { name: 'base_uri', type: AttributeType.STRING },
      sortKey: { name: 'version', type: AttributeType.NUMBER },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      deletionProtection: retain,
    });
  }

  /** `s3+ddb://<bucket>/search?ddbTableName=<commit table>`. */
  get uri(): string {
    return `s3+ddb://${this.bucket.bucketName}/${SEARCH_PREFIX}?ddbTableName=${this.commitTable.tableName}`;
  }

  /** Only its prefix of the bucket, and only the commit table. */
  connect(fn: ServiceFunction): void {
    Grant.addToPrincipal({ grantee: fn, actions: [...SEARCH_OBJECT_ACTIONS], resourceArns: [this.bucket.arnForObjects(`${SEARCH_PREFIX}/*`)] });
    fn.role.addToPrincipalPolicy(new PolicyStatement({
      actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn], conditions: { StringLike: { 's3:prefix': [`${SEARCH_PREFIX}/*`, SEARCH_PREFIX] } },
    }));
    Grant.addToPrincipal({ grantee: fn, actions: [...COMMIT_TABLE_ACTIONS], resourceArns: [this.commitTable.tableArn] });
    Validations.of(fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>/${SEARCH_PREFIX}/*]`,
      reason: 'LanceDB names its files at run time (data fragments, manifests, index files), all under the search prefix; the function touches nothing else of the bucket.',
    });
  }
}
