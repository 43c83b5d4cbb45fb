import { Validations, type App, type Environment } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { serviceConfigFromContext } from './config.js';
import { ServiceStack } from './service-stack.js';

/**
 * Adds the service stack to an app, configured from the app's CDK context, and checks it with
 * cdk-nag's AwsSolutions pack. In cdk-nag 3 a pack is a CDK validation plugin: any finding not
 * acknowledged with `Validations.of(construct).acknowledge({ id, reason })`, warning or error,
 * fails `cdk synth`. `bin/app.ts` and the infrastructure tests both build the app through here
 * (the tests with other folders of flows, `flowsDir`).
 */
export function buildServiceApp(app: App, options: { env?: Environment; flowsDir?: string } = {}): ServiceStack {
  const { stackName, ...config } = serviceConfigFromContext(app.node);
  const stack = new ServiceStack(app, stackName, {
    ...config,
    flowsDir: options.flowsDir,
    flowFunctionContext: (key) => {
      const value: unknown = app.node.tryGetContext(key);
      return value === undefined || value === null || value === '' ? undefined : String(value);
    },
    description: 'Flowgate: storage gateway, TOTP accounts and flow webhook triggers',
    // Account and region come from the CLI's credentials when there are any; without them the
    // stack is environment-agnostic, so `cdk synth` works offline.
    env: options.env ?? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return stack;
}
