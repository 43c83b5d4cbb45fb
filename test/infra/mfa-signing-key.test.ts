import type { CfnElement } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionName } from '../../functions/manifest.js';
import { synth, type Synthesized } from '../support/synth.js';

const RETIRED = 'arn:aws:kms:us-east-1:111122223333:key/11111111-2222-3333-4444-555555555555';

let s: Synthesized;
const idOf = (construct: IConstruct) => s.stack.getLogicalId(construct.node.defaultChild as CfnElement);
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Every policy statement in the template, with the role it is attached to. */
function statements(): { roles: string[]; Action: string | string[]; Resource: unknown }[] {
  return Object.values(s.template.findResources('AWS::IAM::Policy')).flatMap((policy) =>
    (policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]).map((statement) => ({
      ...statement, roles: (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref),
    })));
}

beforeAll(() => {
  s = synth({ mfaRetiredSigningKeyIds: RETIRED });
});

describe('MFA signing key', () => {
  it('is an asymmetric ECC P-256 key for SIGN_VERIFY (not rotated: KMS rotates no asymmetric key)', () => {
    s.template.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', EnableKeyRotation: Match.absent() });
    const key = s.template.findResources('AWS::KMS::Key')[idOf(s.stack.mfaSigningKey.key)]!;
    expect(key.Properties).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
  });

  it('only the accounts function may kms:Sign, and only with this key', () => {
    const signers = statements().filter((statement) => asArray(statement.Action).some((action) => action === 'kms:Sign' || action === 'kms:*'));
    expect(signers).toHaveLength(1);
    expect(signers[0]!.roles).toEqual([idOf(s.stack.functions.accounts.role)]);
    expect(signers[0]!.Resource).toEqual({ 'Fn::GetAtt': [idOf(s.stack.mfaSigningKey.key), 'Arn'] });
    expect((Object.keys(FUNCTIONS) as FunctionName[]).filter((name) => 'signsMfaTokens' in FUNCTIONS[name])).toEqual(['accounts']);
  });

  it('the accounts function may read the public key of a retired key (to keep it in the JWKS), nothing more', () => {
    const onRetired = statements().filter((statement) => JSON.stringify(statement.Resource).includes(RETIRED));
    expect(onRetired).toEqual([expect.objectContaining({ Action: 'kms:GetPublicKey', roles: [idOf(s.stack.functions.accounts.role)] })]);
  });

  it('the key policy lets only the accounts function sign: the account administers the key (CloudFormation updates it, moves its alias) but may not use it or grant its use', () => {
    const key = s.template.findResources('AWS::KMS::Key')[idOf(s.stack.mfaSigningKey.key)]!;
    const keyPolicy = key.Properties.KeyPolicy.Statement as { Principal: { AWS: unknown }; Action: string | string[]; Effect: string }[];
    const signers = keyPolicy.filter((statement) => asArray(statement.Action).some((action) => /^kms:(\*|Sign|S\*|Si\*)$/.test(action) || action === '*'));
    expect(signers).toEqual([expect.objectContaining({ Effect: 'Allow', Principal: { AWS: { 'Fn::GetAtt': [idOf(s.stack.functions.accounts.role), 'Arn'] } } })]);
    expect(asArray(signers[0]!.Action).sort()).toEqual(['kms:GetPublicKey', 'kms:Sign']);
    const account = keyPolicy.filter((statement) => JSON.stringify(statement.Principal).includes(':root'));
    expect(account).toHaveLength(1);
    expect(asArray(account[0]!.Action)).toEqual(expect.arrayContaining(['kms:Put*', 'kms:Update*', 'kms:CreateAlias', 'kms:ScheduleKeyDeletion', 'kms:Describe*']));
    for (const action of asArray(account[0]!.Action)) expect(action, 'no use of the key, and no grant of it').not.toMatch(/^kms:(\*|Sign|Create\*|CreateGrant|Verify)$/);
  });

  it('the accounts function knows the key, the retired keys and the issuer (the API base URL)', () => {
    const fn = s.template.findResources('AWS::Lambda::Function')[idOf(s.stack.functions.accounts.function)]!;
    const env = fn.Properties.Environment.Variables;
    expect(env.MFA_SIGNING_KEY_ID).toEqual({ 'Fn::GetAtt': [idOf(s.stack.mfaSigningKey.key), 'Arn'] });
    expect(env.MFA_RETIRED_SIGNING_KEY_IDS).toBe(RETIRED);
    expect(env.MFA_TOKEN_ISSUER).toEqual({ 'Fn::GetAtt': [idOf(s.stack.http.api), 'ApiEndpoint'] });
  });

  it('the JWKS route needs no credentials: no authorizer, served by the accounts function', () => {
    const routes = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).filter((route) => route.Properties.RouteKey === 'GET /.well-known/jwks.json');
    expect(routes).toHaveLength(1);
    expect(routes[0]!.Properties.AuthorizationType ?? 'NONE').toBe('NONE');
    expect(routes[0]!.Properties.AuthorizerId).toBeUndefined();
    const integrationId = /"Ref":"([^"]+)"/.exec(JSON.stringify(routes[0]!.Properties.Target))![1]!;
    const integration = s.template.findResources('AWS::ApiGatewayV2::Integration')[integrationId]!;
    expect(JSON.stringify(integration.Properties.IntegrationUri)).toContain(idOf(s.stack.functions.accounts.function));
  });
});

describe('MFA signing key rotation, as docs/mfa.md documents it', () => {
  /** The key ARN the output MfaSigningKeyArn showed before the rotation. */
  const CURRENT = 'arn:aws:kms:us-east-1:111122223333:key/aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
  let before: Synthesized;
  let after: Synthesized;
  const keyId = (at: Synthesized) => at.stack.getLogicalId(at.stack.mfaSigningKey.key.node.defaultChild as CfnElement);
  const aliasId = (at: Synthesized) => at.stack.getLogicalId(at.stack.mfaSigningKey.alias.node.defaultChild as CfnElement);
  const accountsEnv = (at: Synthesized) =>
    at.template.findResources('AWS::Lambda::Function')[at.stack.getLogicalId(at.stack.functions.accounts.function.node.defaultChild as CfnElement)]!.Properties.Environment.Variables;

  beforeAll(() => {
    before = synth();
    // The documented step: the next generation, and the current key's ARN among the retired.
    after = synth({ mfaSigningKeyGeneration: 2, mfaRetiredSigningKeyIds: CURRENT });
  });

  it('outputs the signing key\'s ARN, which the rotation step names', () => {
    before.template.hasOutput('MfaSigningKeyArn', { Value: { 'Fn::GetAtt': [keyId(before), 'Arn'] } });
  });

  it('one alias, with the same logical id and name, moves to the new key (an update, not a second alias of the same name)', () => {
    const aliases = (at: Synthesized) => Object.fromEntries(Object.entries(at.template.findResources('AWS::KMS::Alias')).filter(([, alias]) => /mfa-signing$/.test(alias.Properties.AliasName)));
    expect(Object.keys(aliases(before))).toEqual([aliasId(before)]);
    expect(Object.keys(aliases(after))).toEqual([aliasId(before)]);
    const [was, is] = [aliases(before)[aliasId(before)]!, aliases(after)[aliasId(before)]!];
    expect(is.Properties.AliasName).toBe(was.Properties.AliasName);
    expect(was.Properties.TargetKeyId).toEqual({ 'Fn::GetAtt': [keyId(before), 'Arn'] });
    expect(is.Properties.TargetKeyId).toEqual({ 'Fn::GetAtt': [keyId(after), 'Arn'] });
    expect(keyId(after)).not.toBe(keyId(before));
  });

  it('the old key leaves the template but is kept: its DeletionPolicy, which CloudFormation applies as it drops it, retains it', () => {
    const oldKey = before.template.findResources('AWS::KMS::Key')[keyId(before)]!;
    expect(oldKey.DeletionPolicy).toBe('RetainExceptOnCreate');
    expect(oldKey.UpdateReplacePolicy).toBe('Retain');
    expect(after.template.findResources('AWS::KMS::Key')[keyId(before)]).toBeUndefined();
    // The new one will be kept in turn at the next rotation.
    expect(after.template.findResources('AWS::KMS::Key')[keyId(after)]!.DeletionPolicy).toBe('RetainExceptOnCreate');
  });

  it('both keys are in the accounts function\'s key list (the new one signs, the old one stays in the JWKS), and it may read the old one\'s public key', () => {
    expect(accountsEnv(after).MFA_SIGNING_KEY_ID).toEqual({ 'Fn::GetAtt': [keyId(after), 'Arn'] });
    expect(accountsEnv(after).MFA_RETIRED_SIGNING_KEY_IDS).toBe(CURRENT);
    const role = after.stack.getLogicalId(after.stack.functions.accounts.role.node.defaultChild as CfnElement);
    const grants = Object.values(after.template.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(role))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
    expect(grants).toEqual(expect.arrayContaining([
      expect.objectContaining({ Action: 'kms:GetPublicKey', Resource: CURRENT }),
      expect.objectContaining({ Action: ['kms:GetPublicKey', 'kms:Sign'], Resource: { 'Fn::GetAtt': [keyId(after), 'Arn'] } }),
    ]));
  });

  it.each([
    ['alias/Flowgate-mfa-signing', /an alias moves to the new key/],
    ['arn:aws:kms:us-east-1:111122223333:alias/Flowgate-mfa-signing', /an alias moves to the new key/],
    ['aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee', /must be KMS key ARNs/],
    [`${CURRENT},${CURRENT}`, /each retired key once/],
  ])('refuses mfaRetiredSigningKeyIds=%s at synth, saying what to give', (value, message) => {
    expect(() => synth({ mfaRetiredSigningKeyIds: value })).toThrow(/context mfaRetiredSigningKeyIds must/);
    expect(() => synth({ mfaRetiredSigningKeyIds: value })).toThrow(message);
  });

  it.each(['0', '-1', '1.5', 'two'])('refuses mfaSigningKeyGeneration=%s at synth', (value) => {
    expect(() => synth({ mfaSigningKeyGeneration: value })).toThrow(/context mfaSigningKeyGeneration must be a whole number from 1/);
  });
});

describe('the issuer of step-up proofs behind a custom domain', () => {
  it('is the public API base (publicWebhookBaseUrl without /webhooks), whose /.well-known/jwks.json serves the keys; the signer and the verifier read this one setting', () => {
    const env = (at: Synthesized) =>
      at.template.findResources('AWS::Lambda::Function')[at.stack.getLogicalId(at.stack.functions.accounts.function.node.defaultChild as CfnElement)]!.Properties.Environment.Variables;
    expect(env(synth({ publicWebhookBaseUrl: 'https://hooks.example.com/webhooks' })).MFA_TOKEN_ISSUER).toBe('https://hooks.example.com');
    expect(env(synth({ publicWebhookBaseUrl: 'https://example.com/v1/webhooks/' })).MFA_TOKEN_ISSUER).toBe('https://example.com/v1');
    // A public base not ending in /webhooks says nothing of where the API is: the API's own URL.
    const elsewhere = synth({ publicWebhookBaseUrl: 'https://hooks.example.com/in' });
    expect(env(elsewhere).MFA_TOKEN_ISSUER).toEqual({ 'Fn::GetAtt': [elsewhere.stack.getLogicalId(elsewhere.stack.http.api.node.defaultChild as CfnElement), 'ApiEndpoint'] });
  });
});
