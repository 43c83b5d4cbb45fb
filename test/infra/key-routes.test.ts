import { describe, expect, it } from 'vitest';
import { ROUTES, routeKey } from '../../functions/manifest.js';
import { synth } from '../support/synth.js';

/**
 * Every key route has a form with the key in `?key=` (issue 41, item 20): API Gateway cuts a key
 * in the path at a `?` encoded once, before the function runs, so the path form alone loses keys.
 */
describe('key routes in the route table', () => {
  const pathForms = ROUTES.filter((route) => route.path.includes('{key+}'));
  const queryForms = ROUTES.filter((route) => route.action !== undefined);

  it.each(pathForms.map((route) => [routeKey(route), route] as const))('%s has a ?key= form: same method, function, credentials and action, on a path without the key', (_key, pathForm) => {
    const twins = queryForms.filter((route) => route.action === pathForm.operationId && route.method === pathForm.method);
    expect(twins).toHaveLength(1);
    const [queryForm] = twins;
    expect(queryForm).toMatchObject({ fn: pathForm.fn, auth: pathForm.auth, tag: pathForm.tag, operationId: `${pathForm.operationId}ByKey` });
    expect(queryForm!.path).not.toMatch(/\{key\+?\}/);
    expect(queryForm!.path.startsWith(pathForm.path.slice(0, pathForm.path.indexOf('{key+}')))).toBe(false);
  });

  it("every ?key= form runs a path form's action", () =>
    expect(queryForms.map((route) => route.action).sort()).toEqual(pathForms.map((route) => route.operationId).sort()));

  it("the API routes each one, within HTTP APIs' quota of 300 routes per API", () => {
    const routes = Object.values(synth().template.findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey as string);
    for (const route of queryForms) expect(routes).toContain(routeKey(route));
    expect(routes).toHaveLength(ROUTES.length + 1);
    expect(routes.length).toBeLessThanOrEqual(300);
  });
});
