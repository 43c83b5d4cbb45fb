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
