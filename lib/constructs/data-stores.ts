import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { IndexSpec, TableAccess, TableName } from '../../functions/manifest.js';
import type { ServiceFunction } from './service-function.js';

/** What `TABLES` in the manifest says about one table. */
export interface TableSpec {
  /** Environment variable that carries the table's name to the handlers. */
  env: string;
  ttlAttribute?: string;
  /** Global secondary indexes by name. */
  indexes?: Readonly<Record<string, IndexSpec>>;
}

export interface DataStoresProps {
  tables: Record<TableName, TableSpec>;
  /** `retain` keeps the tables (and their data) when the stack is deleted or a table is replaced. */
  removal: 'retain' | 'destroy';
}

/**
 * The DynamoDB tables of the manifest: on demand, point-in-time recovery, encrypted with the AWS
 * managed key, `pk`/`sk` string keys, a TTL attribute where the manifest names one, and its global
 * secondary indexes.
 */
export class DataStores extends Construct {
  readonly tables: Record<TableName, Table>;
  private readonly specs: Record<TableName, TableSpec>;

  constructor(scope: Construct, id: string, props: DataStoresProps) {
    super(scope, id);
    this.specs = props.tables;
    const retain = props.removal === 'retain';
    const tables = {} as Record<TableName, Table>;
    for (const [name, spec] of Object.entries(props.tables) as [TableName, TableSpec][]) {
      tables[name] = new Table(this, name, {
        partitionKey: { name: 'pk', type: AttributeType.STRING },
        sortKey: { name: 'sk', type: AttributeType.STRING },
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        // The AWS managed key, not the secrets key: table access then needs no KMS grant, so only
        // the functions the manifest names can use the secrets key.
        encryption: TableEncryption.AWS_MANAGED,
        timeToLiveAttribute: spec.ttlAttribute,
        removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
        // Also refuses a replacement (e.g. a key schema change) that would drop the data.
        deletionProtection: retain,
      });
      for (const [indexName, index] of Object.entries(spec.indexes ?? {})) {
        // Every attribute projected: the indexed items (buckets' configurations) are small, and a listing needs them whole.
        tables[name].addGlobalSecondaryIndex({
          indexName,
          partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
          sortKey: { name: index.sortKey, type: AttributeType.STRING },
          projectionType: ProjectionType.ALL,
        });
      }
    }
    this.tables = tables;
  }

  /**
   * Grants exactly the operations the manifest lists on each named table (its name reaches the
   * function through the settings table). Not `grantReadWriteData`: that adds `Scan`, `BatchGetItem`, batch writes and
   * `DescribeTable`, which no handler sends.
   */
  connect(fn: ServiceFunction, access: Partial<Record<TableName, TableAccess>>, indexes: Partial<Record<TableName, readonly string[]>> = {}): void {
    for (const [name, operations] of Object.entries(access) as [TableName, TableAccess][]) {
      // Not `table.grant`: once a table has an index, that also grants every operation on `<arn>/index/*`.
      Grant.addToPrincipal({ grantee: fn, actions: operations.map((operation) => `dynamodb:${operation}`), resourceArns: [this.tables[name].tableArn] });
    }
    // An index is only ever queried, and only by the functions that name it.
    for (const [name, indexNames] of Object.entries(indexes) as [TableName, readonly string[]][]) {
      const unknown = indexNames.filter((index) => !Object.hasOwn(this.specs[name].indexes ?? {}, index));
      // A grant on an index the table does not have would deploy and then fail every query (AccessDenied, not a 4xx).
      if (unknown.length) throw new Error(`${fn.node.id} queries index ${unknown.join(', ')} that table ${name} does not have (TABLES in functions/manifest.ts)`);
      const arn = this.tables[name].tableArn;
      Grant.addToPrincipal({ grantee: fn, actions: ['dynamodb:Query'], resourceArns: indexNames.map((index) => `${arn}/index/${index}`) });
    }
  }
}
