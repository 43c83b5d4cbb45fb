import { beforeAll, describe, expect, it } from 'vitest';
import { synth } from '../support/synth.js';
import { changelogMarks, LAST_RELEASE, lastReleaseFile, statefulReplacements, unreleasedChangelog } from './release-checks.js';

// An upgrade must never replace what holds users' data by accident: a table, the bucket, a KMS key
// or alias, a queue, the user pool or its domain. The last release's template is committed
// (releases/<version>/template.json); today's is compared with it. A replacement is allowed only
// when CHANGELOG.md's Unreleased section has a **BREAKING** entry naming its logical id with the
// migration a user must run.
describe(`the stack against release ${LAST_RELEASE}'s template`, () => {
  let today: Record<string, any>;
  const released = lastReleaseFile('template.json');
  beforeAll(() => {
    today = synth().template.toJSON();
  });

  it('replaces no stateful resource that the changelog does not mark breaking', () => {
    const unmarked = statefulReplacements(released, today).filter((r) => !changelogMarks(unreleasedChangelog(), r.logicalId));
    expect(unmarked.map((r) => `${r.logicalId} (${r.type}): ${r.reason}`)).toEqual([]);
  });

  it('a renamed table construct is caught as a replacement', () => {
    const renamed = structuredClone(today);
    const tableId = Object.keys(renamed.Resources).find((id) => renamed.Resources[id].Type === 'AWS::DynamoDB::Table')!;
    renamed.Resources[`${tableId}Renamed`] = renamed.Resources[tableId];
    delete renamed.Resources[tableId];
    expect(statefulReplacements(released, renamed)).toContainEqual(expect.objectContaining({ logicalId: tableId, type: 'AWS::DynamoDB::Table' }));
  });

  it('a changed replacement property (a table key, an alias name, a FIFO queue) is caught', () => {
    const changed = structuredClone(today);
    const ofType = (type: string) => Object.keys(changed.Resources).find((id) => changed.Resources[id].Type === type)!;
    changed.Resources[ofType('AWS::DynamoDB::Table')].Properties.KeySchema = [{ AttributeName: 'other', KeyType: 'HASH' }];
    changed.Resources[ofType('AWS::KMS::Alias')].Properties.AliasName = 'alias/another-name';
    changed.Resources[ofType('AWS::SQS::Queue')].Properties.FifoQueue = true;
    const reasons = statefulReplacements(released, changed).map((r) => r.reason);
    expect(reasons).toEqual(expect.arrayContaining(['KeySchema changed (Update requires: Replacement)', 'AliasName changed (Update requires: Replacement)', 'FifoQueue changed (Update requires: Replacement)']));
  });

  it('a replacement the changelog marks breaking, naming its logical id, is allowed', () => {
    const renamed = structuredClone(today);
    const tableId = Object.keys(renamed.Resources).find((id) => renamed.Resources[id].Type === 'AWS::DynamoDB::Table')!;
    delete renamed.Resources[tableId];
    const changelog = `## [Unreleased]\n### Changed\n- **BREAKING** \`${tableId}\` is replaced: export it first with \`npm run export\`.\n`;
    expect(statefulReplacements(released, renamed).filter((r) => !changelogMarks(changelog, r.logicalId))).toEqual([]);
  });

  it('the documented MFA signing-key rotation, deployed on this version, replaces nothing: the alias moves, the old key leaves the template kept', () => {
    // docs/mfa.md, "The signing key and its rotation": the next generation, and the current key's ARN among the retired.
    const rotated = synth({ mfaSigningKeyGeneration: 2, mfaRetiredSigningKeyIds: 'arn:aws:kms:us-east-1:111122223333:key/aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee' }).template.toJSON();
    const changes = statefulReplacements(today, rotated);
    const oldKey = Object.keys(today.Resources).find((id) => today.Resources[id].Type === 'AWS::KMS::Key' && today.Resources[id].Properties.KeyUsage === 'SIGN_VERIFY')!;
    expect(changes).toEqual([{ logicalId: oldKey, type: 'AWS::KMS::Key', reason: 'it leaves the template (kept by its DeletionPolicy, no longer managed)' }]);
    const alias = (template: Record<string, any>) => Object.entries<any>(template.Resources).find(([, r]) => r.Type === 'AWS::KMS::Alias' && JSON.stringify(r.Properties.AliasName).includes('mfa-signing'));
    expect(alias(rotated)![0]).toBe(alias(today)![0]);
    expect(alias(rotated)![1].Properties.TargetKeyId).not.toEqual(alias(today)![1].Properties.TargetKeyId);
  });
});

