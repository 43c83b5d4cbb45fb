import type { Node } from 'constructs';
import type { AuthSettings } from './constructs/identity.js';

/** Everything a deployment may choose; the rest of the stack comes from `functions/manifest.ts`. */
export interface ServiceConfig {
  /** CloudFormation stack name; also the prefix of the flow state machines' names. */
  stackName: string;
  /** `retain` (default) keeps tables, the secrets key and the user pool when the stack is deleted. */
  dataRemovalPolicy: 'retain' | 'destroy';
  /** Public base of webhook URLs behind a custom domain, handed to the handlers as `PUBLIC_WEBHOOK_BASE_URL`. */
  publicWebhookBaseUrl?: string;
  auth: AuthSettings;
}

const DEFAULT_STACK_NAME = 'Flowgate';

/**
 * Reads the deployment's choices from CDK context (`cdk.json` or `-c key=value`):
 * `stackName`, `dataRemovalPolicy`, `publicWebhookBaseUrl`, and either nothing (a Cognito user pool,
 * with `cognitoThreatProtection=true` for the Plus plan) or `authIssuer` + `authJwksUrl`
 * (+ `authAudience`, `authJwtAlgorithms`) for an external issuer.
 */
export function serviceConfigFromContext(node: Node): ServiceConfig {
  const text = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string' && typeof value !== 'boolean') throw new Error(`context ${key} must be a string`);
    return String(value);
  };

  const dataRemovalPolicy = text('dataRemovalPolicy') ?? 'retain';
  if (dataRemovalPolicy !== 'retain' && dataRemovalPolicy !== 'destroy') {
    throw new Error(`context dataRemovalPolicy must be "retain" or "destroy", not "${dataRemovalPolicy}"`);
  }

  const publicWebhookBaseUrl = text('publicWebhookBaseUrl')?.replace(/\/+$/, '');
  if (publicWebhookBaseUrl !== undefined) requireHttpsUrl('publicWebhookBaseUrl', publicWebhookBaseUrl);

  const issuer = text('authIssuer');
  const jwksUrl = text('authJwksUrl');
  let auth: AuthSettings;
  if (issuer === undefined && jwksUrl === undefined) {
    auth = { kind: 'cognito', threatProtection: text('cognitoThreatProtection') === 'true' };
  } else if (issuer !== undefined && jwksUrl !== undefined) {
    requireHttpsUrl('authJwksUrl', jwksUrl);
    const algorithms = (text('authJwtAlgorithms') ?? 'RS256').split(',').map((a) => a.trim()).filter(Boolean);
    auth = { kind: 'external', issuer, jwksUrl, audience: text('authAudience'), algorithms };
  } else {
    throw new Error('set both authIssuer and authJwksUrl in CDK context for an external issuer, or neither for the Cognito user pool');
  }

  return { stackName: text('stackName') ?? DEFAULT_STACK_NAME, dataRemovalPolicy, publicWebhookBaseUrl, auth };
}

function requireHttpsUrl(key: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`context ${key} must be an absolute URL, not "${value}"`);
  }
  if (url.protocol !== 'https:') throw new Error(`context ${key} must be an https URL, not "${value}"`);
}
