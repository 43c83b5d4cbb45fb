import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { apiCompare } from 'api-smart-diff';
import { inlineRefs } from '../support/openapi.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** The release the last baselines were written for: `releases/<version>/` holds its template and OpenAPI document. */
export const LAST_RELEASE = readFileSync(resolve(ROOT, 'releases/LATEST'), 'utf8').trim();

export const lastReleaseFile = (name: 'template.json' | 'openapi.json') =>
  JSON.parse(readFileSync(resolve(ROOT, 'releases', LAST_RELEASE, name), 'utf8')) as Record<string, any>;

/**
 * The resources that hold users' data or identity, and the properties CloudFormation documents as
 * "Update requires: Replacement" for each: a change to one of them, or to the resource's logical
 * id, makes CloudFormation create a new resource and delete (or, retained, orphan) the old one.
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-dynamodb-table.html and the
 * pages beside it for each type.
 */
export const REPLACEMENT_PROPERTIES: Record<string, string[]> = {
  'AWS::DynamoDB::Table': ['TableName', 'KeySchema', 'LocalSecondaryIndexes'],
  'AWS::DynamoDB::GlobalTable': ['TableName', 'KeySchema', 'LocalSecondaryIndexes'],
  'AWS::S3::Bucket': ['BucketName'],
  'AWS::KMS::Key': ['KeySpec', 'KeyUsage', 'MultiRegion'],
  'AWS::KMS::Alias': ['AliasName'],
  'AWS::SQS::Queue': ['QueueName', 'FifoQueue'],
  'AWS::Cognito::UserPool': ['UserPoolName', 'UsernameAttributes', 'AliasAttributes'],
  'AWS::Cognito::UserPoolDomain': ['Domain', 'UserPoolId'],
};

/** What an upgrade from `before` to `after` would replace or delete among the stateful resources. */
export interface Replacement {
  logicalId: string;
  type: string;
  reason: string;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The stateful resources `after` replaces or removes. A logical id that disappears is a deletion
 * (or, retained, an orphan: the new stack no longer sees the data); a replacement property that
 * changes is a replacement. `UserPoolName` is listed because CDK names the pool from the stack, so a
 * change there comes with a renamed construct.
 */
export function statefulReplacements(before: Record<string, any>, after: Record<string, any>): Replacement[] {
  const found: Replacement[] = [];
  for (const [logicalId, resource] of Object.entries<any>(before.Resources ?? {})) {
    const properties = REPLACEMENT_PROPERTIES[resource.Type];
    if (!properties) continue;
    const next = after.Resources?.[logicalId];
    if (!next) {
      const kept = resource.DeletionPolicy === 'Retain' || resource.DeletionPolicy === 'RetainExceptOnCreate';
      found.push({ logicalId, type: resource.Type, reason: kept ? 'it leaves the template (kept by its DeletionPolicy, no longer managed)' : 'its logical id is gone (renamed or removed construct): deleted' });
      continue;
    }
    if (next.Type !== resource.Type) {
      found.push({ logicalId, type: resource.Type, reason: `its type changed to ${next.Type}` });
      continue;
    }
    for (const property of properties) {
      if (!same(resource.Properties?.[property], next.Properties?.[property])) {
        found.push({ logicalId, type: resource.Type, reason: `${property} changed (Update requires: Replacement)` });
      }
    }
  }
  return found;
}

/** A breaking difference between two OpenAPI documents, named by the operation it touches. */
export interface BreakingChange {
  operation: string;
  path: string;
  description: string;
}

function inlined(document: object): Record<string, any> {
  const copy = structuredClone(document) as Record<string, any>;
  const schemas = copy.components?.schemas ?? {};
  copy.paths = inlineRefs(copy.paths, schemas);
  if (copy.components) delete copy.components.schemas;
  return copy;
}

/** The value at `path` in `document`, if there is one. */
const at = (document: unknown, path: string[]): unknown =>
  path.reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), document);

/**
 * Where a change gives a field its first `enum`, if it does: `request` (a parameter or a request
 * body's field) or `answer`. api-smart-diff 1.0.6 reads each value of a new enum as something added,
 * so it calls a first enum on a request's field non-breaking and one on an answer's field breaking:
 * the reverse of what they are. A first enum narrows a field: in a request a value a client sends may
 * now be refused (breaking); in an answer it only says which of the strings a client already accepts
 * can come, as when `Error.error` became `ErrorCode` (every answer valid now was valid before). Values
 * added later to an answer's enum are new answers; the document says to expect new error codes.
 */
function firstEnumAt(before: Record<string, any>, path: string[]): 'request' | 'answer' | undefined {
  const enumAt = path.lastIndexOf('enum');
  if (path[0] !== 'paths' || enumAt < 0 || enumAt !== path.length - 2) return undefined;
  const field = at(before, path.slice(0, enumAt)) as Record<string, unknown> | undefined;
  if (field === undefined || field.enum !== undefined) return undefined;
  return path[3] === 'responses' ? 'answer' : 'request';
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/**
 * The breaking changes from `before` to `after` as api-smart-diff classifies them (a removed route,
 * parameter or answer field, a narrowed type, a new required field, a removed status), each named
 * by its operation (`PUT /storage/kv/{bucket}`) or, outside `paths`, by the JSON path it touches.
 */
export function breakingApiChanges(before: object, after: object): BreakingChange[] {
  // Each document with its named schemas written out where they are used: api-smart-diff 1.0.6 misses
  // a change made inside a `$ref` when the other side has the schema inline (a required field added to
  // `TriggerInput` went unseen against 1.0.0's inline document), and reports a named schema's change
  // again under `components/schemas`, which no operation names. Copies, too: it resolves `$ref`s in place.
  const old = inlined(before); // apiCompare writes into its arguments (an `enum: []` where the other side has one)
  const { diffs } = apiCompare(inlined(before), inlined(after));
  return diffs
    .filter((diff) => {
      const firstEnum = firstEnumAt(old, (diff.path ?? []).map(String));
      return firstEnum ? firstEnum === 'request' : diff.type === 'breaking';
    })
    .map((diff) => {
      const path = (diff.path ?? []).map(String);
      const operation = path[0] === 'paths' && path[1]
        ? path[2] && METHODS.has(path[2]) ? `${path[2].toUpperCase()} ${path[1]}` : path[1]
        : path.join('/');
      return { operation, path: path.join('/'), description: `${diff.action} ${path.slice(3).join('/') || path.join('/')}` };
    });
}

/** The text of CHANGELOG.md's `## [Unreleased]` section: what has changed since the last release. */
export function unreleasedChangelog(text = readFileSync(resolve(ROOT, 'CHANGELOG.md'), 'utf8')): string {
  const start = text.indexOf('## [Unreleased]');
  if (start < 0) return '';
  const end = text.indexOf('\n## [', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The changelog's breaking entries: each line (bullet) marked **BREAKING**. */
export const breakingEntries = (unreleased: string) => unreleased.split('\n').filter((line) => line.includes('**BREAKING**'));

/**
 * Whether a breaking entry of the changelog names `subject` in backticks (a logical id such as
 * `Datakv201B647B`, or an operation such as `DELETE /accounts/users/{sub}/factors`), which is how an
 * entry says which replacement or API break it covers and what to do about it.
 */
export const changelogMarks = (unreleased: string, subject: string) =>
  breakingEntries(unreleased).some((line) => line.includes(`\`${subject}\``));
