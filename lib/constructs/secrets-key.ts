import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.js';

/** The environment variable the handlers read (`functions/adapters/secret-box-from-env.ts`). */
export const SECRETS_KEY_ENV = 'SECRETS_KMS_KEY_ID';

export interface SecretsKeyProps {
  /** Must follow the tables' policy: a deleted key makes the retained secrets unreadable. */
  removal: 'retain' | 'destroy';
}

/**
 * The KMS key that seals secrets at rest (TOTP secrets, webhook signing secrets), with yearly
 * rotation. The handlers call `Encrypt`/`Decrypt` directly, so those are the only actions granted.
 */
export class SecretsKey extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string, props: SecretsKeyProps) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Flowgate: seals TOTP and webhook signing secrets at rest',
      enableKeyRotation: true,
      removalPolicy: props.removal === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(30),
    });
  }

  /** `encrypt` may also decrypt (it re-reads what it sealed); `decrypt` may only open. */
  connect(fn: ServiceFunction, use: 'encrypt' | 'decrypt'): void {
    if (use === 'encrypt') this.key.grant(fn, 'kms:Encrypt', 'kms:Decrypt');
    else this.key.grant(fn, 'kms:Decrypt');
    fn.addEnvironment(SECRETS_KEY_ENV, this.key.keyArn);
  }
}
