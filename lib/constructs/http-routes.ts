import { type CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { CfnStage, CorsHttpMethod, HttpApi, HttpMethod, HttpRoute, HttpRouteKey, HttpStage, LogGroupLogDestination, type CorsPreflightOptions, type ThrottleSettings } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from '../../functions/cors.js';
import { routeKey, type FunctionName, type RouteSpec } from '../../functions/manifest.js';
import type { ServiceFunction } from './service-function.js';

export interface HttpRoutesProps {
  /** The manifest's route table. */
  routes: readonly RouteSpec[];
  /** The function behind `$default` (unknown routes: 404/405 in the service's error shape). */
  defaultRoute: { fn: FunctionName };
  functions: Record<FunctionName, ServiceFunction>;
  /** Stage-wide default for every route. @default 500 requests/s, bursts of 1,000 */
  throttle?: ThrottleSettings;
  /**
   * Limits of their own for the public routes anyone can flood: the webhook receiver (the routes of
   * the `webhook` function), `$default`, and each other route without credentials (`publicReads`:
   * the JWKS, `/health`, `/openapi.json`, the console's files), each route a bucket of its own.
   * @default the stage's, shared
   */
  publicRouteThrottle?: { webhooks: ThrottleSettings; defaultRoute: ThrottleSettings; publicReads: ThrottleSettings };
  logRetention?: RetentionDays;
  /** Exact origins whose web apps may call the API (see `functions/cors.ts`). @default none: no CORS configuration */
  corsAllowedOrigins?: readonly string[];
}

const DEFAULT_THROTTLE: ThrottleSettings = { rateLimit: 500, burstLimit: 1000 };

/**
 * The API's CORS configuration for the given origins, or none for none: without one, API Gateway
 * answers no preflight and adds no CORS header, so browsers on other origins are refused.
 * Bearer tokens and API keys travel in headers, not cookies, so credentials mode is not allowed
 * (`allowCredentials` false); the wildcard is refused earlier, in `parseCorsOrigins`.
 */
export function corsPreflightFor(origins: readonly string[] | undefined): CorsPreflightOptions | undefined {
  if (!origins?.length) return undefined;
  if (origins.some((origin) => origin.includes('*'))) throw new Error('CORS origins must be exact: the API allows the Authorization and X-Api-Key headers');
  return {
    allowOrigins: [...origins],
    allowHeaders: [...CORS_ALLOW_HEADERS],
    allowMethods: CORS_ALLOW_METHODS.map((method) => CorsHttpMethod[method as keyof typeof CorsHttpMethod]),
    exposeHeaders: [...CORS_EXPOSE_HEADERS],
    allowCredentials: false,
    maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
  };
}

/**
 * Access log fields. The route key, never the path or query: webhook paths hold the unguessable
 * `webhook_id` and receivers may pass `api_key` in the query, and neither belongs in a log.
 */
const ACCESS_LOG_FIELDS = {
  // One line per webhook, billed by the byte: short keys, and no requestTime or protocol (each log
  // event has its own timestamp; every request here is HTTPS to the same API), no response length
  // (the receiver's answers are a few bytes of JSON; a flow's answer is in its execution record)
  // and no integration latency (`ms` is the request's; the functions' own time is Lambda's
  // Duration metric). `id` is the request id an error's metric line names (docs/operating.md).
  // `method` stays although most route keys name it: the webhook route's is `ANY`, where a
  // sender's GET handshake and its POST delivery differ only by it. `fnError`: the integration
  // is always the route's function.
  id: '$context.requestId',
  ip: '$context.identity.sourceIp',
  method: '$context.httpMethod',
  route: '$context.routeKey',
  status: '$context.status',
  ms: '$context.responseLatency',
  fnError: '$context.integrationErrorMessage',
  error: '$context.error.message',
};

/**
 * The HTTP API: one route per entry of the route table, each integrated with its function (payload
 * format 2.0), plus `$default`; a `$default` stage with throttling and JSON access logs. There is
 * no API Gateway authorizer: the handlers authenticate so that every denial has the service's
 * `{"error": ...}` shape.
 */
export class HttpRoutes extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  /** `https://<api-id>.execute-api.<region>.amazonaws.com`, no trailing slash. */
  readonly baseUrl: string;
  readonly webhookBaseUrl: string;

  constructor(scope: Construct, id: string, props: HttpRoutesProps) {
    super(scope, id);
    this.api = new HttpApi(this, 'Api', {
      description: 'Flowgate: storage gateway, TOTP accounts and webhook triggers',
      createDefaultStage: false,
      corsPreflight: corsPreflightFor(props.corsAllowedOrigins),
    });
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      // Under /aws/vendedlogs/, log delivery is covered by one wildcard statement of the account's
      // CloudWatch Logs resource policy; any other name adds this group's ARN to that policy, which
      // is capped at 5,120 characters, so in a busy account enabling access logging fails the
      // deploy. The stack name (letters, digits, hyphens; unique per account and region) keeps it
      // unique and within log group names' 512 characters.
      // https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/AWS-logs-and-resource-policy.html
      logGroupName: `/aws/vendedlogs/apigateway/${Stack.of(this).stackName}-access`,
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = new HttpStage(this, 'Stage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle ?? DEFAULT_THROTTLE,
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    this.baseUrl = this.api.apiEndpoint;
    this.webhookBaseUrl = `${this.baseUrl}/webhooks`;

    const integrations = new Map<FunctionName, HttpLambdaIntegration>();
    const integrationFor = (fn: FunctionName) => {
      let integration = integrations.get(fn);
      if (!integration) {
        // One invoke permission per function, for this API's routes, rather than one per route: each route's own
        // was a resource of its own (99 of the stack's 500 with the search routes), and only this API can invoke either way.
        integration = new HttpLambdaIntegration(`${fn}Integration`, props.functions[fn].function, { scopePermissionToRoute: false });
        integrations.set(fn, integration);
      }
      return integration;
    };

    const routes: HttpRoute[] = [];
    const seen = new Set<string>();
    for (const route of props.routes) {
      const key = routeKey(route);
      if (seen.has(key)) throw new Error(`route ${key} appears twice in the route table`);
      seen.add(key);
      // Construct ids may not contain '/'; the route key itself stays exact.
      routes.push(new HttpRoute(this, key.replace(/[^A-Za-z0-9]+/g, '-'), {
        httpApi: this.api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: integrationFor(route.fn),
      }));
    }
    routes.push(new HttpRoute(this, 'Default', {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: integrationFor(props.defaultRoute.fn),
    }));

    if (props.publicRouteThrottle) {
      const { webhooks, defaultRoute, publicReads } = props.publicRouteThrottle;
      const limited = routes.flatMap((route, index) => {
        const spec = props.routes[index];
        if (!spec) return [{ route, key: '$default', limits: defaultRoute }];
        if (spec.fn === 'webhook') return [{ route, key: routeKey(spec), limits: webhooks }];
        // A route anyone may call without credentials (the JWKS relying services fetch) must not
        // spend the stage's bucket, which the authenticated routes live on.
        return spec.auth === 'none' ? [{ route, key: routeKey(spec), limits: publicReads }] : [];
      });
      const stage = this.stage.node.defaultChild as CfnStage;
      // RouteSettings is free-form JSON in CDK: the keys are CloudFormation's own, as written.
      stage.routeSettings = Object.fromEntries(limited.map(({ key, limits }) => [key, { ThrottlingRateLimit: limits.rateLimit, ThrottlingBurstLimit: limits.burstLimit }]));
      // API Gateway refuses a stage whose route settings name a route that does not exist yet
      // ("Unable to find Route by key"): the routes are created first.
      for (const { route } of limited) stage.addResourceDependency(route.node.defaultChild as CfnResource);
    }

    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason: 'No API Gateway authorizer by design: the handlers verify the bearer JWT or X-Api-Key themselves (functions/domain/authenticator.ts) so every denial is 401 {"error":"unauthorized"}, which an authorizer cannot return; /health, /openapi.json, $default and the webhook receiver (own API key/signature checks) are public.',
      });
    }
  }
}
