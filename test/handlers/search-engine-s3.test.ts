/**
 * The LanceDB adapter through the path the deployed stack uses: its files on S3 (s3rver) with
 * commits serialized through a DynamoDB table (dynalite), `s3+ddb://…?ddbTableName=…`, and several
 * engines (as several function instances) writing to one index at once.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { LanceSearchEngine } from '../../functions/adapters/lance/lance-search-engine.js';
import type { IndexRecord } from '../../functions/domain/search/types.js';
import { LOCAL_AWS_ENV, LOCAL_OBJECTS_BUCKET } from '../../local/engines.js';
import { useEngines } from '../support/engines.js';

const t = useEngines();
const COMMIT_TABLE = 'search-commits';

describe('LanceDB over s3+ddb (s3rver and dynalite)', () => {
  it('four engines writing to one index at once lose no document', async () => {
    await t.dynamo.send(new CreateTableCommand({
      TableName: COMMIT_TABLE, BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'base_uri', KeyType: 'HASH' }, { AttributeName: 'version', KeyType: 'RANGE' }],
      AttributeDefinitions: [{ AttributeName: 'base_uri', AttributeType: 'S' }, { AttributeName: 'version', AttributeType: 'N' }],
    }));
    const env = t.engines.env;
    const storageOptions = {
      aws_access_key_id: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, aws_secret_access_key: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY, aws_region: LOCAL_AWS_ENV.AWS_REGION,
      aws_endpoint: env.AWS_ENDPOINT_URL_S3!, dynamodb_endpoint: env.AWS_ENDPOINT_URL_DYNAMODB!, allow_http: 'true', aws_virtual_hosted_style_request: 'false',
    };
    const uri = `s3+ddb://${LOCAL_OBJECTS_BUCKET}/search?ddbTableName=${COMMIT_TABLE}`;
    const engines = Array.from({ length: 4 }, () => new LanceSearchEngine({ uri, storageOptions }));
    const record: IndexRecord = {
      accountId: 's3-test', name: 'shared', generation: 1, createdAt: '', updatedAt: '',
      settings: { idField: 'id', searchable: [{ field: 'text', weight: 1 }], filterable: [], sortable: [], stored: null, maxDocuments: 1_000_000 },
    };
    await engines[0]!.saveIndex(record, { isNew: true });
    await Promise.all(engines.map(async (engine, w) => {
      for (let batch = 0; batch < 5; batch++) {
        await engine.upsert(record, Array.from({ length: 20 }, (_, i) => ({ id: `w${w}-${batch}-${i}`, doc: { id: `w${w}-${batch}-${i}`, text: `writer ${w} batch ${batch}` } })));
      }
    }));
    expect((await engines[0]!.stats(record)).documents).toBe(400);
    const hits = await engines[1]!.search(record, { words: ['writer'], match: 'all', prefix: false, typos: false, candidates: 1000 });
    expect(hits.candidates).toHaveLength(400);
    // The commits went through the commit table: one row per table version, the index's 20 writes among them.
    const commits = (await t.dynamo.send(new ScanCommand({ TableName: COMMIT_TABLE }))).Items ?? [];
    expect(commits.filter((item) => String(item.base_uri).includes('_shared_g1')).length).toBeGreaterThanOrEqual(21);
  }, 120_000);
});
