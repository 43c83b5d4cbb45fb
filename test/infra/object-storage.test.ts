import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionName } from '../../functions/manifest.js';
import { ABORT_INCOMPLETE_UPLOADS_AFTER_DAYS } from '../../lib/constructs/object-storage.js';
import { synth } from '../support/synth.js';

const s = synth();
const resources = (type: string) => s.template.findResources(type);
const bucketId = () => Object.keys(resources('AWS::S3::Bucket'))[0]!;
const roleRef = (name: FunctionName) => ({ Ref: s.stack.getLogicalId(s.stack.functions[name].function.role!.node.defaultChild as never) });

/** Every IAM statement that names the objects bucket, with the roles its policy is attached to. */
function bucketStatements(): { roles: unknown[]; actions: string[]; resources: unknown }[] {
  const id = bucketId();
  return Object.values(resources('AWS::IAM::Policy')).flatMap((policy: any) =>
    (policy.Properties.PolicyDocument.Statement as any[])
      .filter((statement) => JSON.stringify(statement.Resource ?? '').includes(id))
      .map((statement) => ({ roles: policy.Properties.Roles, actions: [statement.Action].flat().sort(), resources: statement.Resource })));
}

describe('the objects bucket', () => {
  it('is one bucket, encrypted, with every public access blocked and ACLs off', () => {
    expect(Object.keys(resources('AWS::S3::Bucket'))).toHaveLength(1);
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
  });

  it('removes unfinished multipart uploads after a day', () => {
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: ABORT_INCOMPLETE_UPLOADS_AFTER_DAYS } })]) },
    });
  });

  it('refuses every request not made over TLS', () => {
    s.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('is kept when the stack goes, unless dataRemovalPolicy is destroy', () => {
    expect(Object.values(resources('AWS::S3::Bucket'))[0]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    expect(Object.values(synth({ dataRemovalPolicy: 'destroy' }).template.findResources('AWS::S3::Bucket'))[0]).toMatchObject({ DeletionPolicy: 'Delete' });
  });

  it('with dataRemovalPolicy=destroy, is emptied as the stack deletes it (CloudFormation deletes only an empty bucket), and kept whole otherwise', () => {
    expect(resources('Custom::S3AutoDeleteObjects')).toEqual({});
    const destroyed = synth({ dataRemovalPolicy: 'destroy' }).template;
    const bucket = Object.keys(destroyed.findResources('AWS::S3::Bucket'))[0]!;
    const emptiers = Object.values(destroyed.findResources('Custom::S3AutoDeleteObjects'));
    expect(emptiers).toHaveLength(1);
    expect(emptiers[0]!.Properties.BucketName).toEqual({ Ref: bucket });
    // CDK's provider may delete objects only through the bucket's policy, which it needs to exist until it has run.
    destroyed.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucket },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Allow', Action: Match.arrayWith(['s3:DeleteObject*']) })]) },
    });
  });

  it("answers browsers' preflights for presigned transfers from the API's own origin (the console) and the CORS allowlist, exposing ETag for multipart", () => {
    const apiId = Object.keys(resources('AWS::ApiGatewayV2::Api'))[0]!;
    const rules = (template: typeof s.template) => (Object.values(template.findResources('AWS::S3::Bucket'))[0] as any).Properties.CorsConfiguration.CorsRules;
    const [rule] = rules(s.template);
    expect(rule).toMatchObject({ AllowedMethods: ['GET', 'HEAD', 'PUT'], AllowedHeaders: ['content-type', 'range', 'if-match', 'if-none-match', 'x-amz-*'], ExposedHeaders: ['etag', 'content-length', 'content-range'], MaxAge: 600 });
    expect(rule.AllowedOrigins).toHaveLength(1);
    expect(JSON.stringify(rule.AllowedOrigins[0])).toContain(apiId);
    const withApps = synth({ corsAllowedOrigins: ['https://app.example.com'], publicWebhookBaseUrl: 'https://hooks.example.com/webhooks' });
    expect(rules(withApps.template)[0].AllowedOrigins.slice(1)).toEqual(['https://hooks.example.com', 'https://app.example.com']);
  });

  it("grants only the manifest's S3 actions, on the bucket's objects (listing on the bucket), only to the functions that use it", () => {
    const users = (Object.keys(FUNCTIONS) as FunctionName[]).filter((name) => 'objectsBucket' in FUNCTIONS[name]);
    expect(users).toEqual(['objects', 'kvSweeper']);
    const objectsArn = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId(), 'Arn'] }, '/*']] };
    const bucketArn = { 'Fn::GetAtt': [bucketId(), 'Arn'] };
    expect(bucketStatements()).toEqual(expect.arrayContaining([
      { roles: [roleRef('objects')], actions: ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject'], resources: objectsArn },
      // The sweeper lists a generation's keys and deletes them; its expiry pass also drops uploads left open (abort, delete: an upload's bytes have a name of their own, so no HEAD).
      { roles: [roleRef('kvSweeper')], actions: ['s3:AbortMultipartUpload', 's3:DeleteObject'], resources: objectsArn },
      { roles: [roleRef('kvSweeper')], actions: ['s3:ListBucket'], resources: bucketArn },
      // Search indexes' files live under search/ of the same bucket, and the search function reaches only that prefix (lib/constructs/search-storage.ts).
      { roles: [roleRef('search')], actions: ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'], resources: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId(), 'Arn'] }, '/search/*']] } },
      { roles: [roleRef('search')], actions: ['s3:ListBucket'], resources: bucketArn },
      // Its maintenance (index builds, compaction, the sweep) runs the same engine on the same prefix.
      { roles: [roleRef('searchMaintenance')], actions: ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'], resources: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId(), 'Arn'] }, '/search/*']] } },
      { roles: [roleRef('searchMaintenance')], actions: ['s3:ListBucket'], resources: bucketArn },
    ]));
    expect(bucketStatements()).toHaveLength(7);
  });

  it('gives its name to the functions that use it only, as OBJECTS_BUCKET', () => {
    const withName = Object.entries(resources('AWS::Lambda::Function'))
      .filter(([, fn]: [string, any]) => fn.Properties.Environment?.Variables?.OBJECTS_BUCKET !== undefined)
      .map(([, fn]: [string, any]) => fn.Properties.Environment.Variables.OBJECTS_BUCKET);
    expect(withName).toEqual([{ Ref: bucketId() }, { Ref: bucketId() }]);
  });
});
