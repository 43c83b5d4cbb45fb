import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { App, type Environment } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildServiceApp } from '../../lib/app.js';
import type { ServiceStack } from '../../lib/service-stack.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** `cdk.json`'s context: the feature flags a real `cdk synth` runs with. */
export const CDK_CONTEXT = JSON.parse(readFileSync(resolve(ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>;

export interface Synthesized {
  app: App;
  stack: ServiceStack;
  template: Template;
}

/**
 * The app exactly as `cdk synth` builds it (cdk.json's context and cdk-nag), minus bundling, with
 * extra context (`-c key=value`), an environment, or another folder of flows.
 */
export function synth(context: Record<string, unknown> = {}, options: { env?: Environment; flowsDir?: string } = {}): Synthesized {
  const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = buildServiceApp(app, options);
  return { app, stack, template: Template.fromStack(stack) };
}
