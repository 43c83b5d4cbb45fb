import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildServiceApp } from '../../lib/app.js';
import { ROUTES, routeKey } from '../../functions/manifest.js';
import { testApp } from '../support/synth.js';

/** The app as `cdk synth` builds it (cdk.json's context and cdk-nag), minus bundling. */
function synth(context: Record<string, unknown> = {}): Template {
  const app = testApp(context);
  return Template.fromStack(buildServiceApp(app));
}

const apiOf = (template: Template) => {
  const apis = Object.values(template.findResources('AWS::ApiGatewayV2::Api'));
  expect(apis).toHaveLength(1);
  return apis[0]!.Properties as Record<string, any>;
};
const stageOf = (template: Template) => {
  const stages = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
  expect(stages).toHaveLength(1);
  return stages[0]!.Properties as Record<string, any>;
};

/** The stack with cdk.json's context alone; made in a hook, since the first synth of a file loads the CDK (slow on a busy machine). */
let byDefault: Template;
beforeAll(() => {
  byDefault = synth();
});

describe('CORS from context corsAllowedOrigins', () => {
  it('by default the API has no CORS configuration: no origin is allowed', () => {
    expect(apiOf(byDefault).CorsConfiguration).toBeUndefined();
  });

  it('listed origins get the headers the API takes and answers, the methods in use, and no credentials mode (so `*` is a wildcard)', () => {
    const cors = apiOf(synth({ corsAllowedOrigins: ['https://app.example.com', 'https://admin.example.com'] })).CorsConfiguration;
    expect(cors).toEqual({
      AllowOrigins: ['https://app.example.com', 'https://admin.example.com'],
      // `*` for x-meta-* (no prefix pattern in CORS); authorization, which `*` never covers, and the rest by name.
      AllowHeaders: ['authorization', 'x-api-key', 'content-type', 'x-mfa-token', 'if-match', 'if-none-match', 'range', '*'],
      AllowMethods: ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT'],
      ExposeHeaders: ['retry-after', 'etag', 'content-range', 'location', '*'],
      AllowCredentials: false,
      MaxAge: 600,
    });
  });

  it('takes comma-separated text, as `-c corsAllowedOrigins=a,b` gives it', () => {
    expect(apiOf(synth({ corsAllowedOrigins: 'https://a.example.com, http://localhost:5173' })).CorsConfiguration.AllowOrigins)
      .toEqual(['https://a.example.com', 'http://localhost:5173']);
  });

  it.each([['*'], ['https://*'], ['https://*.example.com']])('refuses %s at synth: the credentials headers are allowed', (origin) => {
    expect(() => synth({ corsAllowedOrigins: [origin] })).toThrow(/corsAllowedOrigins may not hold .*Authorization and X-Api-Key/);
  });

  it.each([['https://app.example.com/'], ['https://app.example.com/path'], ['app.example.com'], ['ftp://example.com']])('refuses %s: not an exact origin', (origin) => {
    expect(() => synth({ corsAllowedOrigins: [origin] })).toThrow(/exact origins/);
  });
});

describe('HTTP API throttling from context', () => {
  it('defaults to 500 requests/s with bursts of 1,000', () => {
    expect(stageOf(byDefault).DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 });
  });

  it('apiThrottleRateLimit and apiThrottleBurstLimit set the default stage throttling', () => {
    expect(stageOf(synth({ apiThrottleRateLimit: 50, apiThrottleBurstLimit: '120' })).DefaultRouteSettings)
      .toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 120 });
  });

  it('the public webhook and $default routes have limits of their own, so a flood on them leaves the stage\'s to the authenticated routes', () => {
    const stage = stageOf(byDefault);
    expect(stage.RouteSettings).toMatchObject({
      'ANY /webhooks/{webhook_id}': { ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 },
      $default: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
    });
  });

  it('the JWKS and every other route without credentials have a bucket of their own too; no authenticated route has one (they share the stage\'s)', () => {
    const settings = stageOf(byDefault).RouteSettings as Record<string, unknown>;
    expect(settings['GET /.well-known/jwks.json']).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
    const publicRoutes = ROUTES.filter((route) => route.auth === 'none').map(routeKey);
    expect(Object.keys(settings).sort()).toEqual([...publicRoutes, '$default'].sort());
    const tuned = stageOf(synth({ publicReadThrottleRateLimit: 20, publicReadThrottleBurstLimit: '40' })).RouteSettings;
    expect(tuned['GET /.well-known/jwks.json']).toEqual({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 });
    expect(tuned['GET /health']).toEqual({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 });
    expect(() => synth({ publicReadThrottleBurstLimit: 0 })).toThrow(/context publicReadThrottleBurstLimit must be a whole number/);
  });

  it('the stage is created after the routes its route settings name, as API Gateway requires', () => {
    const [[stageId, stage]] = Object.entries(byDefault.findResources('AWS::ApiGatewayV2::Stage')) as [[string, any]];
    const routes = byDefault.findResources('AWS::ApiGatewayV2::Route');
    const routeIdByKey = new Map(Object.entries(routes).map(([id, route]) => [route.Properties.RouteKey as string, id]));
    for (const key of Object.keys(stage.Properties.RouteSettings)) {
      expect(routeIdByKey.has(key), `${key} is a route of the API`).toBe(true);
      expect(stage.DependsOn, `${stageId} waits for ${key}`).toContain(routeIdByKey.get(key));
    }
  });

  it('webhookThrottle* and defaultRouteThrottle* set those routes\' limits', () => {
    const stage = stageOf(synth({ webhookThrottleRateLimit: 3000, webhookThrottleBurstLimit: '5000', defaultRouteThrottleRateLimit: 10, defaultRouteThrottleBurstLimit: 20 }));
    expect(stage.RouteSettings['ANY /webhooks/{webhook_id}']).toEqual({ ThrottlingRateLimit: 3000, ThrottlingBurstLimit: 5000 });
    expect(stage.RouteSettings.$default).toEqual({ ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 });
    expect(() => synth({ webhookThrottleRateLimit: 0 })).toThrow(/context webhookThrottleRateLimit must be a whole number/);
  });

  it.each([['apiThrottleRateLimit', 0], ['apiThrottleBurstLimit', -1], ['apiThrottleRateLimit', 'fast'], ['apiThrottleBurstLimit', 1.5]])('refuses %s=%s', (key, value) => {
    expect(() => synth({ [key]: value })).toThrow(new RegExp(`context ${key} must be a whole number`));
  });
});
