import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Alias, Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.js';

export interface MfaSigningKeyProps {
  /** Retired signing keys (ARNs) still listed in the JWKS until the proofs they signed expire. */
  retiredKeyArns: readonly string[];
}

/**
 * The asymmetric KMS key (`ECC_NIST_P256`, `SIGN_VERIFY`) that signs step-up proofs (`mfa_token`,
 * ES256): the private key never leaves KMS, and only the function that issues proofs may sign.
 *
 * KMS does not rotate asymmetric keys. To rotate: deploy with the current key's ARN in context
 * `mfaRetiredSigningKeyIds` and this construct's id changed (a new key signs, the old one stays in
 * the JWKS); once its last proof has expired (10 minutes), drop it from the context and schedule its deletion.
 */
export class MfaSigningKey extends Construct {
  readonly key: Key;
  readonly alias: Alias;

  constructor(scope: Construct, id: string, private readonly props: MfaSigningKeyProps) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Flowgate: signs step-up proofs (mfa_token, ES256)',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      // A lost signing key only means new proofs under a new key: nothing stored depends on it.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    this.alias = new Alias(this, 'Alias', { aliasName: `alias/${Stack.of(this).stackName}-mfa-signing`, targetKey: this.key, removalPolicy: RemovalPolicy.DESTROY });
  }

  /** `kms:Sign` and `kms:GetPublicKey` on the key, and `kms:GetPublicKey` on the retired ones. */
  connect(fn: ServiceFunction): void {
    Grant.addToPrincipal({ grantee: fn, actions: ['kms:Sign', 'kms:GetPublicKey'], resourceArns: [this.key.keyArn] });
    if (this.props.retiredKeyArns.length > 0) {
      Grant.addToPrincipal({ grantee: fn, actions: ['kms:GetPublicKey'], resourceArns: [...this.props.retiredKeyArns] });
    }
  }
}
