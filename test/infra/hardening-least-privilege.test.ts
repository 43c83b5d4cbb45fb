import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildServiceApp } from '../../lib/app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CDK_CONTEXT = JSON.parse(readFileSync(resolve(ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>;

/** The app exactly as `cdk synth` builds it (cdk.json's context and cdk-nag), minus bundling. */
function synth(context: Record<string, unknown> = {}) {
  const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = buildServiceApp(app);
  return { stack, template: Template.fromStack(stack) };
}

describe('an external token issuer', () => {
  const external = { authIssuer: 'https://issuer.example.com/', authJwksUrl: 'https://issuer.example.com/.well-known/jwks.json' };

  it('without authAudience fails synth: it would accept any token the issuer signs, for any app', () => {
    expect(() => synth(external)).toThrow(/context authAudience is required with authIssuer/);
  });
});
