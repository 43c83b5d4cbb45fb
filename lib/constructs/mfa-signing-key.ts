import { CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccountRootPrincipal, Grant, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Alias, Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.js';

export interface MfaSigningKeyProps {
  /**
   * Which key signs: 1 (the default) is the key every stack started with; each rotation makes the
   * next. Context `mfaSigningKeyGeneration`.
   */
  generation: number;
  /** Retired signing keys (ARNs) still listed in the JWKS until the proofs they signed expire. */
  retiredKeyArns: readonly string[];
}

/**
 * What the account (its administrators, through IAM) may do with a signing key: manage it, not use
 * it. `kms:Create*` of CDK's admin set would include `kms:CreateGrant`, with which an administrator
 * could give anyone `kms:Sign`, so only `kms:CreateAlias` is kept. `kms:PutKeyPolicy` stays (a key
 * nobody may administer cannot be fixed): an administrator can still rewrite the policy, which
 * CloudTrail records.
 */
export const MFA_KEY_ADMIN_ACTIONS = [
  'kms:CreateAlias', 'kms:Describe*', 'kms:Enable*', 'kms:List*', 'kms:Put*', 'kms:Update*', 'kms:Revoke*', 'kms:Disable*',
  'kms:Get*', 'kms:Delete*', 'kms:TagResource', 'kms:UntagResource', 'kms:ScheduleKeyDeletion', 'kms:CancelKeyDeletion',
] as const;

/** What the function that issues proofs may do with the signing key: sign, and read its public key. */
const SIGNER_ACTIONS = ['kms:Sign', 'kms:GetPublicKey'];

/**
 * The asymmetric KMS key (`ECC_NIST_P256`, `SIGN_VERIFY`) that signs step-up proofs (`mfa_token`,
 * ES256): the private key never leaves KMS, and only the function that issues proofs may sign. The
 * key policy names that function's role for `kms:Sign`; the account gets administration without it,
 * so no IAM policy (an administrator's `*` included) lets anyone else sign.
 *
 * KMS rotates no asymmetric key (`enableKeyRotation` must stay off), so rotation is a deploy:
 * raise context `mfaSigningKeyGeneration` by one and put the current key's ARN (output
 * `MfaSigningKeyArn`) in `mfaRetiredSigningKeyIds`. A new key is created and signs, the alias
 * (`alias/<stack>-mfa-signing`, one resource whose logical id never changes) moves to it, and the
 * old key leaves the template but is kept (`DeletionPolicy` `RetainExceptOnCreate`) and stays in
 * the JWKS. Once its last proof has expired (10 minutes), drop its ARN from the context and
 * schedule its deletion (`aws kms schedule-key-deletion`).
 */
export class MfaSigningKey extends Construct {
  readonly key: Key;
  readonly alias: Alias;

  constructor(scope: Construct, id: string, private readonly props: MfaSigningKeyProps) {
    super(scope, id);
    if (!Number.isSafeInteger(props.generation) || props.generation < 1) throw new Error(`the MFA signing key's generation must be a whole number from 1, not ${props.generation}`);
    // Generation 1 keeps the id the key always had, so a stack deployed before generations existed keeps its key.
    this.key = new Key(this, props.generation === 1 ? 'Key' : `Key${props.generation}`, {
      description: `Flowgate: signs step-up proofs (mfa_token, ES256), generation ${props.generation}`,
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      // A key policy of its own: CDK's default gives the account `kms:*`, and with it `kms:Sign` to
      // any principal whose IAM policy allows it.
      policy: new PolicyDocument({
        statements: [new PolicyStatement({ sid: 'AccountAdministersWithoutUse', principals: [new AccountRootPrincipal()], actions: [...MFA_KEY_ADMIN_ACTIONS], resources: ['*'] })],
      }),
      // Kept when a rotation takes it out of the template (it verifies the proofs it signed until
      // they expire) and when the stack is deleted; deleted only if its creation fails.
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      pendingWindow: Duration.days(7),
    });
    this.alias = new Alias(this, 'Alias', { aliasName: `alias/${Stack.of(this).stackName}-mfa-signing`, targetKey: this.key, removalPolicy: RemovalPolicy.DESTROY });
    new CfnOutput(Stack.of(this), 'MfaSigningKeyArn', {
      value: this.key.keyArn,
      description: 'The key that signs step-up proofs: at a rotation, put it in context mfaRetiredSigningKeyIds and raise mfaSigningKeyGeneration',
    });
  }

  /**
   * `kms:Sign` and `kms:GetPublicKey` on the key (in its key policy and the role's), and
   * `kms:GetPublicKey` on the retired ones (whose policies named the role when they signed).
   */
  connect(fn: ServiceFunction): void {
    this.key.addToResourcePolicy(new PolicyStatement({ sid: 'OnlyTheIssuerSigns', principals: [fn.role], actions: SIGNER_ACTIONS, resources: ['*'] }));
    Grant.addToPrincipal({ grantee: fn, actions: SIGNER_ACTIONS, resourceArns: [this.key.keyArn] });
    if (this.props.retiredKeyArns.length > 0) {
      Grant.addToPrincipal({ grantee: fn, actions: ['kms:GetPublicKey'], resourceArns: [...this.props.retiredKeyArns] });
    }
  }
}
