import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXECUTION_STATUSES } from '../../functions/domain/flows/ports.js';
import { OUTCOMES } from '../../functions/domain/stats/outcomes.js';
import { parseBulkReplay } from '../../functions/domain/flows/execution-filter.js';
import { FLOW_NAME } from '../../functions/domain/flows/flow-name.js';
import {
  parseApiKeyRegeneration, parseSigningSecretRotation, parseTriggerPatch, parseTriggerSettings,
} from '../../functions/domain/triggers/trigger-requests.js';
import { CHOOSABLE_SENDER_IDS, SENDER_IDS, senderRow } from '../../functions/domain/webhooks/senders/catalog.js';
import { checkSenderSecret } from '../../functions/domain/webhooks/senders/secrets.js';
import { ROUTES } from '../../functions/manifest.js';
import {
  anyJsonValue, aroundLength, bmpText, documentAccepts, documentedBodySchema, nearValid, inlinedOpenApiDocument as document, overTheWire, validatorAccepts, type JsonSchema,
} from '../support/openapi.js';

const operation = (method: string, path: string) => document.paths[path][method];
const receiver = operation('post', '/webhooks/{webhook_id}');

describe('webhook triggers in the OpenAPI document', () => {
  // 403: a gateway route refuses an API key without the route's scope (triggers or triggers:read).
  it.each([
    ['post', '/triggers', ['201', '400', '401', '403', '409', '415', '500']],
    ['get', '/triggers', ['200', '400', '401', '403', '500']],
    ['get', '/triggers/{id}', ['200', '401', '403', '404', '500']],
    ['patch', '/triggers/{id}', ['200', '400', '401', '403', '404', '409', '415', '500']],
    ['delete', '/triggers/{id}', ['204', '401', '403', '404', '409', '500']],
    ['post', '/triggers/{id}/regenerate-url', ['200', '401', '403', '404', '409', '500']],
    ['post', '/triggers/{id}/regenerate-api-key', ['200', '400', '401', '403', '404', '409', '415', '500']],
    ['post', '/triggers/{id}/rotate-signing-secret', ['200', '400', '401', '403', '404', '409', '415', '500']],
    ['get', '/triggers/{id}/executions', ['200', '400', '401', '403', '404', '500']],
    ['get', '/triggers/{id}/stats', ['200', '400', '401', '403', '404', '500']],
    ['get', '/triggers/stats', ['200', '400', '401', '403', '500']],
    ['get', '/flows/{name}', ['200', '400', '401', '403', '404', '500']],
    ['post', '/webhooks/{webhook_id}', ['200', '400', '401', '403', '404', '405', '413', '415', '500', '502', '503', '504']],
  ])('%s %s documents every status it answers', (method, path, statuses) => {
    expect(Object.keys(operation(method, path).responses).sort()).toEqual(statuses);
  });

  it('every trigger route has a description', () => {
    for (const route of ROUTES.filter((r) => r.fn === 'triggers' || r.fn === 'webhook')) {
      const method = route.method === 'ANY' ? 'post' : route.method.toLowerCase();
      expect(operation(method, route.path).description, route.operationId).toEqual(expect.any(String));
    }
  });

  it('the receiver takes JSON, urlencoded and multipart bodies', () => {
    expect(Object.keys(receiver.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
  });

  it('the receiver takes the API key as the api_key query parameter or the X-Api-Key header, and no gateway credentials', () => {
    expect(receiver.parameters).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: 'api_key', in: 'query' }),
      expect.objectContaining({ name: 'X-Api-Key', in: 'header' }),
    ]));
    expect(receiver.security).toEqual([]);
  });

  it('the receiver\'s 200 covers accepted, ignored, duplicate, challenge and flow output', () => {
    const variants = receiver.responses['200'].content['application/json'].schema.anyOf.map((v: { title: string }) => v.title);
    expect(variants).toEqual(['accepted', 'ignored', 'duplicate', 'challenge', 'flow output']);
  });

  it('the receiver\'s 405 documents Allow: POST', () => {
    expect(receiver.responses['405'].headers.allow.schema.const).toBe('POST');
  });

  it('says x-api-key is withheld from the flow, and how stale the receiver\'s cache may be', () => {
    expect(receiver.description).toContain('`X-Api-Key` withheld');
    expect(receiver.description).toContain('TRIGGER_CACHE_TTL_MS');
  });

  it('says regenerate-api-key with protection off is 400', () => {
    const regenerate = operation('post', '/triggers/{id}/regenerate-api-key');
    expect(regenerate.responses['400'].description).toContain('protection is off');
  });

  it('a trigger never has a secret or key hash field; api_key appears only where a key is generated', () => {
    const read = operation('get', '/triggers/{id}').responses['200'].content['application/json'].schema.properties.data;
    expect(JSON.stringify(read)).not.toMatch(/"(secret|secret_sealed|api_key_hash|api_key)"/);
    const created = operation('post', '/triggers').responses['201'].content['application/json'].schema.properties.data;
    expect(created.properties.api_key).toBeDefined();
  });

  it('executions list their documented shape, with limit and cursor', () => {
    const list = operation('get', '/triggers/{id}/executions');
    const item = list.responses['200'].content['application/json'].schema.properties.data.properties.executions.items;
    expect(item.required).toEqual(['execution_id', 'event_id', 'received_at', 'status', 'attempts', 'timeline']);
    expect(item.properties.status.enum).toEqual(EXECUTION_STATUSES);
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(['id', 'limit', 'cursor', 'status', 'type', 'event_id', 'since', 'until']);
    const detail = operation('get', '/triggers/{id}/executions/{execution_id}').responses['200'].content['application/json'].schema.properties.data;
    expect(Object.keys(detail.properties.request.properties).sort()).toEqual(['body', 'body_bytes', 'body_encoding', 'headers', 'method', 'query', 'source_ip']);
  });

  it('delivery counts list every outcome, in the order the API answers them, and say what a read costs', () => {
    const stats = operation('get', '/triggers/{id}/stats');
    const data = stats.responses['200'].content['application/json'].schema.properties.data;
    expect(Object.keys(data.properties.totals.properties)).toEqual([...OUTCOMES, 'total']);
    expect(data.properties.buckets.items.required).toEqual(['start', ...OUTCOMES, 'total']);
    expect(stats.parameters.map((p: { name: string }) => p.name)).toEqual(['id', 'since', 'until', 'bucket']);
    expect(stats.description).toContain('What a read costs');
    expect(operation('get', '/triggers/stats').parameters.map((p: { name: string }) => p.name)).toEqual(['limit', 'cursor', 'since', 'until', 'bucket']);
  });

  it('the bulk replay body is documented as the API validates it', () => {
    const accepts = apiAcceptsBulkReplay;
    const documented = documentAccepts('post', '/triggers/{id}/replay');
    const bodies: unknown[] = [
      { status: ['failed'] }, { since: '2026-11-01T00:00:00Z' }, { status: ['failed', 'refused'], until: '2026-11-02', limit: 500, cursor: 'abc' },
      {}, { type: 'a.*' }, { status: [] }, { status: ['nope'] }, { status: ['failed'], limit: 501 }, { status: ['failed'], limit: 0 }, { status: ['failed'], other: 1 },
      { status: 'failed' }, [],
    ];
    for (const body of bodies) expect(documented(body), JSON.stringify(body)).toBe(accepts(body));
  });

  it('create requires only flow and refuses unknown fields', () => {
    const schema = operation('post', '/triggers').requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['flow']);
    expect(schema.additionalProperties).toBe(false);
  });

  it('documents every signature service the API accepts, when creating, changing and reading a trigger, and says how each signs', () => {
    const read = operation('get', '/triggers/{id}').responses['200'].content['application/json'].schema.properties.data;
    const signatures = [documentedBodySchema('post', '/triggers'), documentedBodySchema('patch', '/triggers/{id}'), read].map((s: JsonSchema) => s.properties!.signature!);
    // Only the senders a trigger can choose: a row the catalog cannot verify (Plaid) is no choice.
    for (const signature of signatures) expect(signature.properties!.service!.enum).toEqual(CHOOSABLE_SENDER_IDS);
    for (const service of SENDER_IDS) expect(signatures[0]!.description, service).toContain(`${service} `);
  });
});

const apiAcceptsBulkReplay = validatorAccepts((body) => parseBulkReplay(body));

/** Whether the API's own validator takes the body (any named flow counts as deployed). */
function apiAccepts(parse: typeof parseTriggerSettings | typeof parseTriggerPatch): (body: unknown) => boolean {
  return validatorAccepts((body) => {
    const flow = (body as { flow?: unknown } | null)?.flow;
    return parse(body, new Set(typeof flow === 'string' ? [flow] : []));
  });
}

/**
 * Bodies near the rules, valid and invalid alike. Three rules live only in the document's prose (a
 * `custom` signature needs its settings and no other service takes them; a standard_webhooks secret
 * is `whsec_<base64>` of at least 24 bytes; an `allowed_source_ips` entry of the documented pattern
 * must also be a real address and prefix), so bodies here always keep those three.
 */
function triggerBodies(): fc.Arbitrary<unknown> {
  const documented = documentedBodySchema('post', '/triggers').properties!;
  // `custom` is one of two shapes; these bodies are near the first (header, prefix, timestamp header).
  const customSchema = documented.signature!.properties!.custom!;
  const customFields = ((customSchema.anyOf ?? customSchema.oneOf ?? [customSchema]) as JsonSchema[]).find((shape) => shape.properties?.header)!.properties!;
  const oneOf = (values: readonly unknown[] | undefined) => fc.constantFrom(...values!);
  const nonString = anyJsonValue.filter((value) => typeof value !== 'string');

  const headerName = fc.stringMatching(new RegExp(customFields.header!.pattern!));
  const custom = nearValid(
    {
      algorithm: oneOf(customFields.algorithm!.enum),
      header: headerName,
      encoding: oneOf(customFields.encoding!.enum),
      prefix: bmpText({ minLength: 1, maxLength: 8 }),
      timestamp_header: headerName,
    },
    {
      required: ['algorithm', 'header', 'encoding'],
      edge: {
        algorithm: fc.oneof(bmpText({ maxLength: 6 }), anyJsonValue),
        header: fc.oneof(aroundLength(128), bmpText({ maxLength: 6 }), anyJsonValue),
        encoding: fc.oneof(bmpText({ maxLength: 6 }), anyJsonValue),
        prefix: fc.oneof(aroundLength(64), fc.constant(''), anyJsonValue),
        timestamp_header: fc.oneof(aroundLength(128), bmpText({ maxLength: 6 }), anyJsonValue),
      },
    },
  );

  // A fourth rule of prose: a secret must be one its sender's key could be (checkSenderSecret;
  // for these text keys, no control character and no space at either end).
  const secret = bmpText({ minLength: 1, maxLength: 40 }).filter((text) => checkSenderSecret(senderRow('github')!, text) === undefined);
  const textKeyRule = (value: unknown) => typeof value !== 'string' || value === '' || checkSenderSecret(senderRow('github')!, value) === undefined;
  // Any JSON value, but a string that breaks the prose rule (e.g. " ", which the document's types allow) is the rule's case, not an edge of the types.
  const secretEdge = fc.oneof(aroundLength(1024).filter(textKeyRule), fc.constant(''), anyJsonValue.filter(textKeyRule));
  const unknownService = fc.oneof(bmpText({ maxLength: 8 }), nonString);
  // The first seven schemes take any secret (but standard_webhooks); the others' secret rules are prose (checkSenderSecret).
  const listedServices = ['stripe', 'github', 'slack', 'shopify', 'twilio'];
  const plainServices = listedServices.filter((service) => senderRow(service)?.secret_prefix === undefined);
  // A sixth rule of prose: a sender whose secrets all start alike (Stripe's `whsec_`) takes only such a secret.
  const prefixedServices = listedServices.filter((service) => senderRow(service)?.secret_prefix !== undefined);
  const signature = fc.oneof(
    fc.constant(null),
    // A fifth rule of prose: `secret` may be left out only for asana and notion, which hand theirs over in their handshake.
    nearValid({ service: oneOf(plainServices), secret }, { edge: { service: unknownService, secret: secretEdge }, droppable: ['service'] }),
    nearValid(
      { service: oneOf(prefixedServices), secret: secret.map((text) => `whsec_${text}`).filter((text) => text.trim() === text) },
      { edge: { service: unknownService, secret: fc.oneof(fc.constant(''), nonString) }, droppable: ['service'] },
    ),
    nearValid(
      { service: fc.constant('standard_webhooks'), secret: fc.uint8Array({ minLength: 24, maxLength: 64 }).map((bytes) => `whsec_${Buffer.from(bytes).toString('base64')}`) },
      { edge: { service: unknownService, secret: fc.oneof(fc.constant(''), nonString) }, droppable: ['service'] },
    ),
    nearValid({ service: fc.constant('custom'), secret, custom }, { edge: { service: unknownService, secret: secretEdge, custom: anyJsonValue }, droppable: ['service'] }),
  );

  const filterEntry = bmpText({ minLength: 1, maxLength: 12 }).filter((entry) => !entry.slice(0, -1).includes('*'));
  const ipPattern = new RegExp((documented.allowed_source_ips!.items as JsonSchema).pattern!, 'u');
  const sourceIp = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 })).map(([address, prefix]) => `${address}/${prefix}`),
    fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 128 })).map(([address, prefix]) => `${address}/${prefix}`),
  );
  // Off the documented pattern: refused by the document and the API alike.
  const notSourceIp = fc.oneof(bmpText({ maxLength: 12 }), fc.constantFrom('10.0.0.0/08', '10.0.0.0/', ' 10.0.0.1', 'fe80::1%eth0', '10.0.0.1-10.0.0.9'))
    .filter((entry) => !ipPattern.test(entry));
  return nearValid(
    {
      flow: fc.stringMatching(FLOW_NAME),
      response_mode: oneOf(documented.response_mode!.enum),
      event_filter: fc.array(filterEntry, { maxLength: 3 }),
      api_key_enabled: fc.boolean(),
      signature,
      allowed_source_ips: fc.oneof(fc.constant(null), fc.array(sourceIp, { minLength: 1, maxLength: 3 })),
      enabled: fc.boolean(),
      deduplicate: fc.boolean(),
    },
    {
      required: [],
      edge: {
        flow: fc.oneof(aroundLength(64), bmpText({ maxLength: 8 }), anyJsonValue),
        response_mode: fc.oneof(bmpText({ maxLength: 10 }), anyJsonValue),
        event_filter: fc.oneof(
          fc.array(fc.oneof(bmpText({ maxLength: 12 }), aroundLength(256), anyJsonValue), { minLength: 1, maxLength: 3 }),
          fc.constantFrom(99, 100, 101).map((count) => Array.from({ length: count }, (_, i) => `type.${i}`)),
          anyJsonValue,
        ),
        api_key_enabled: anyJsonValue,
        allowed_source_ips: fc.oneof(
          fc.constant([]),
          fc.constantFrom(49, 50, 51).map((count) => Array.from({ length: count }, (_, i) => `192.0.2.${i}`)),
          fc.array(fc.oneof(sourceIp, notSourceIp, anyJsonValue.filter((value) => typeof value !== 'string')), { minLength: 1, maxLength: 3 }),
          anyJsonValue.filter((value) => !Array.isArray(value)),
        ),
        enabled: anyJsonValue,
        deduplicate: anyJsonValue,
      },
    },
  );
}

describe('trigger request bodies: the document and the validator agree', () => {
  const agree = (method: string, path: string, parse: (body: unknown) => unknown, bodies: fc.Arbitrary<unknown>) => {
    const documented = documentAccepts(method, path);
    const accepted = validatorAccepts(parse);
    fc.assert(fc.property(bodies, (candidate) => {
      const body = overTheWire(candidate);
      expect(accepted(body), JSON.stringify(body)).toBe(documented(body));
    }), { numRuns: 500 });
  };
  const overlap = fc.oneof(fc.constantFrom(-1, 0, 1, 86400, 604799, 604800, 604801), fc.double({ noNaN: true, noDefaultInfinity: true }), anyJsonValue);

  it('post /triggers/{id}/rotate-signing-secret: a body the document calls valid is accepted, and one it calls invalid is refused', () => {
    const bodies = nearValid(
      { secret: bmpText({ minLength: 1, maxLength: 40 }), previous_secret_expires_in_seconds: fc.integer({ min: 0, max: 604800 }) },
      { required: ['secret'], edge: { secret: fc.oneof(aroundLength(1024), fc.constant(''), anyJsonValue), previous_secret_expires_in_seconds: overlap } },
    );
    agree('post', '/triggers/{id}/rotate-signing-secret', parseSigningSecretRotation, bodies);
  });

  it('post /triggers/{id}/regenerate-api-key: a body the document calls valid is accepted, and one it calls invalid is refused', () => {
    const bodies = nearValid(
      { previous_key_expires_in_seconds: fc.integer({ min: 0, max: 604800 }) },
      { required: [], edge: { previous_key_expires_in_seconds: overlap } },
    );
    agree('post', '/triggers/{id}/regenerate-api-key', parseApiKeyRegeneration, bodies);
  });

  it.each([
    ['post', '/triggers', parseTriggerSettings],
    ['patch', '/triggers/{id}', parseTriggerPatch],
  ] as const)('%s %s: a body the document calls valid is accepted, and one it calls invalid is refused', (method, path, parse) => {
    const documented = documentAccepts(method, path);
    const accepted = apiAccepts(parse);
    fc.assert(
      fc.property(triggerBodies(), (candidate) => {
        const body = overTheWire(candidate);
        expect(accepted(body), JSON.stringify(body)).toBe(documented(body));
      }),
      { numRuns: 1500 },
    );
  });
});

