import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../functions/openapi/document.js';
import { breakingApiChanges, changelogMarks, LAST_RELEASE, lastReleaseFile, unreleasedChangelog } from './release-checks.js';

// An app written against the last release must keep working, or be told what breaks: today's
// OpenAPI document is compared with the last release's (releases/<version>/openapi.json) by
// api-smart-diff, and every breaking change (a removed route, parameter, status or answer field, a
// narrowed type, a new required field) must have a **BREAKING** entry in CHANGELOG.md's Unreleased
// section naming its operation in backticks (`DELETE /accounts/users/{sub}/factors`).
describe(`the OpenAPI document against release ${LAST_RELEASE}'s`, () => {
  const released = lastReleaseFile('openapi.json');
  const today = buildOpenApiDocument() as object;
  /**
   * `document` with only these routes (its components kept). The checker reads each route on its
   * own, so the tests of what it catches compare only the routes they change: a whole document's
   * comparison takes api-smart-diff several seconds, and the first test already makes it.
   */
  const only = (document: object, paths: string[]) => {
    const { paths: all, ...rest } = document as { paths: Record<string, unknown> };
    return { ...rest, paths: Object.fromEntries(paths.map((path) => [path, all[path]])) };
  };

  it('breaks nothing the changelog does not mark breaking', () => {
    const unmarked = breakingApiChanges(released, today).filter((change) => !changelogMarks(unreleasedChangelog(), change.operation));
    expect(unmarked.map((change) => `${change.operation}: ${change.description}`)).toEqual([]);
  });

  it('a removed answer field is caught as breaking, named by its operation', () => {
    const changed = structuredClone(only(today, ['/api-keys'])) as any;
    const { $ref } = changed.paths['/api-keys'].get.responses['200'].content['application/json'].schema;
    const data = changed.components.schemas[$ref.split('/').pop()].properties.data;
    const field = Object.keys(data.properties)[0];
    delete data.properties[field];
    // Named by the field too: the route has breaking changes of its own since the release (its security), which name the operation as well.
    expect(breakingApiChanges(only(released, ['/api-keys']), changed)).toContainEqual(expect.objectContaining({ operation: 'GET /api-keys', path: expect.stringMatching(new RegExp(`/responses/200/.*/properties/${field}$`)) }));
  });

  it('a removed route and a changed success status are caught', () => {
    const routes = ['/health', '/openapi.json'];
    const changed = structuredClone(only(today, routes)) as any;
    delete changed.paths['/health'].get;
    const responses = changed.paths['/openapi.json'].get.responses;
    responses['201'] = responses['200'];
    delete responses['200'];
    const operations = breakingApiChanges(only(released, routes), changed).map((change) => change.operation);
    expect(operations).toEqual(expect.arrayContaining(['GET /health', 'GET /openapi.json']));
  });

  it('a break the changelog marks, naming its operation, is allowed', () => {
    const changed = structuredClone(only(today, ['/health'])) as any;
    delete changed.paths['/health'].get;
    const changelog = `## [Unreleased]\n### Removed\n- **BREAKING** \`GET /health\` is gone: use \`GET /ready\`.\n`;
    const changes = breakingApiChanges(only(released, ['/health']), changed);
    expect(changes.map((change) => change.operation)).toContain('GET /health');
    const unmarked = changes.filter((change) => !changelogMarks(changelog, change.operation) && !changelogMarks(unreleasedChangelog(), change.operation));
    expect(unmarked).toEqual([]);
  });

  it("a first enum on an answer's string field is no break (it narrows what clients already accept); on a request's field it is", () => {
    const answer = structuredClone(only(released, ['/health'])) as any;
    answer.paths['/health'].get.responses['200'].content['application/json'].schema.properties.status = { type: 'string' };
    const narrowed = structuredClone(answer);
    narrowed.paths['/health'].get.responses['200'].content['application/json'].schema.properties.status = { type: 'string', enum: ['ok'] };
    expect(breakingApiChanges(answer, narrowed)).toEqual([]);

    const request = structuredClone(only(released, ['/triggers'])) as any;
    const body = { type: 'object', properties: { mode: { type: 'string' } } };
    request.paths['/triggers'].post.requestBody = { required: true, content: { 'application/json': { schema: body } } };
    const narrowedRequest = structuredClone(request);
    narrowedRequest.paths['/triggers'].post.requestBody.content['application/json'].schema.properties.mode.enum = ['a', 'b'];
    expect(breakingApiChanges(request, narrowedRequest)).toContainEqual(expect.objectContaining({ operation: 'POST /triggers' }));
  });

  it('a new required field in a named request schema is caught at the operation that takes it', () => {
    const changed = structuredClone(only(today, ['/triggers'])) as any;
    const { $ref } = changed.paths['/triggers'].post.requestBody.content['application/json'].schema;
    const input = changed.components.schemas[$ref.split('/').pop()];
    input.required = [...(input.required ?? []), 'flow_version'];
    input.properties.flow_version = { type: 'string' };
    expect(breakingApiChanges(only(released, ['/triggers']), changed)).toContainEqual(expect.objectContaining({ operation: 'POST /triggers', path: expect.stringContaining('/requestBody/content/application/json/schema/required/') }));
  });
});

