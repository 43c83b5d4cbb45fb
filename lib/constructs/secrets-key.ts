import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Alias, Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { SECRET_PURPOSE_KEY } from '../../functions/domain/secret-purposes.js';
import type { SecretsKeyUse } from '../../functions/manifest.js';
import type { ServiceFunction } from './service-function.js';


export interface SecretsKeyProps {
  /** Must follow the tables' policy: a deleted key makes the retained secrets unreadable. */
  removal: 'retain' | 'destroy';
}

/**
 * The KMS key that seals secrets at rest (TOTP secrets, webhook signing secrets), with yearly
 * rotation, and an alias (`alias/<stack>-secrets`) so operators can find it. The handlers call
 * `Encrypt` or `Decrypt` directly, so a function is granted only the one it uses, and only for
 * the purposes of secret it handles: every seal carries an encryption context with a `purpose`.
 */
export class SecretsKey extends Construct {
  readonly key: Key;
  readonly alias: Alias;

  constructor(scope: Construct, id: string, props: SecretsKeyProps) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Flowgate: seals TOTP and webhook signing secrets at rest',
      enableKeyRotation: true,
      removalPolicy: props.removal === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(30),
    });
    this.alias = new Alias(this, 'Alias', {
      aliasName: `alias/${Stack.of(this).stackName}-secrets`,
      targetKey: this.key,
      // Only a name: a retained alias would block creating the stack again under the same name,
      // and a retained key is still found by its ARN and description.
      removalPolicy: RemovalPolicy.DESTROY,
    });
  }

  /**
   * Grants `kms:Encrypt` or `kms:Decrypt` on the key, on condition that the request's encryption
   * context names one of the function's purposes: a function that seals TOTP secrets cannot open
   * or forge a webhook signing secret, even though one key seals both.
   */
  connect(fn: ServiceFunction, use: SecretsKeyUse): void {
    Grant.addToPrincipal({
      grantee: fn,
      actions: use.operations.map((operation) => (operation === 'encrypt' ? 'kms:Encrypt' : 'kms:Decrypt')),
      resourceArns: [this.key.keyArn],
      conditions: { StringEquals: { [`kms:EncryptionContext:${SECRET_PURPOSE_KEY}`]: [...use.purposes] } },
    });
  }
}
