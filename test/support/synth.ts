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
 * The app exactly as `cdk synth` builds it (cdk.json's context and cdk-nag), minus bundling and
 * CDK's built-in CloudFormation validation, with extra context (`-c key=value`), an environment,
 * or another folder of flows. The validation takes several seconds of every synth and only warns;
 * test/infra/synth.test.ts runs the real `cdk synth` with it and checks its report.
 */
export function synth(context?: Record<string, unknown>, options?: { env?: Environment; flowsDir?: string }): Synthesized {
  // The stack as `cdk synth` builds it by default is what most template tests read: built once
  // per worker (about 0.6 s of CPU a synth, which fifteen files asked for), and frozen, so a test
  // that changed it would fail rather than change what the next file reads.
  if (context === undefined && options === undefined) return (byDefault ??= freezeTemplate(synthesize({}, {})));
  return synthesize(context ?? {}, options ?? {});
}

let byDefault: Synthesized | undefined;

function freezeTemplate(synthesized: Synthesized): Synthesized {
  const freeze = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
    Object.freeze(value);
    for (const inner of Object.values(value)) freeze(inner);
  };
  freeze(synthesized.template.toJSON());
  return synthesized;
}

function synthesize(context: Record<string, unknown>, options: { env?: Environment; flowsDir?: string }): Synthesized {
  const app = testApp(context);
  const stack = buildServiceApp(app, options);
  return { app, stack, template: Template.fromStack(stack) };
}

/** An app with cdk.json's context and `context`, built as {@link synth} builds it. */
export const testApp = (context: Record<string, unknown> = {}): App =>
  new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context }, builtinCloudFormationValidation: false });
