import { AppError } from '../../functions/shared/errors.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { buildOpenApiDocument } from '../../functions/openapi/document.js';

/** The document as `GET /openapi.json` serves it. */
export const openApiDocument = buildOpenApiDocument();

/** `value` with every `$ref` to `#/components/schemas/…` replaced by the schema it names (the document has no cycles). */
export function inlineRefs<T>(value: T, schemas: Record<string, unknown> = openApiDocument.components.schemas): T {
  if (Array.isArray(value)) return value.map((item) => inlineRefs(item, schemas)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const { $ref, ...rest } = value as Record<string, unknown>;
  const inlined = Object.fromEntries(Object.entries(rest).map(([key, item]) => [key, inlineRefs(item, schemas)]));
  if (typeof $ref !== 'string' || !$ref.startsWith('#/components/schemas/')) return ($ref === undefined ? inlined : { $ref, ...inlined }) as T;
  const named = schemas[$ref.slice('#/components/schemas/'.length)];
  if (named === undefined) throw new Error(`${$ref} names no schema`);
  return { ...(inlineRefs(named, schemas) as object), ...inlined } as T;
}

/** The document with its named schemas written out where they are used: what a test reads a shape from. */
export const inlinedOpenApiDocument = { ...openApiDocument, paths: inlineRefs(openApiDocument.paths) };

/**
 * A standard JSON Schema 2020-12 validator (the dialect of OpenAPI 3.1) that knows nothing of zod.
 * Strict, so an unknown keyword is an error rather than silently ignored; `format` is an annotation,
 * as 2020-12 has it by default.
 */
export const jsonSchemaValidator = () => new Ajv2020({ strict: true, validateFormats: false });

const ajv = jsonSchemaValidator();
ajv.addKeyword({ keyword: 'components' }); // lets a part's `#/components/schemas/…` resolve in `schemaAccepts`

/** The parts of a JSON Schema that tests read. */
export interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  description?: string;
  [keyword: string]: unknown;
}

/** The JSON Schema the document gives for an operation's JSON request body. */
export const documentedBodySchema = (method: string, path: string): JsonSchema =>
  inlinedOpenApiDocument.paths[path][method].requestBody.content['application/json'].schema;

/** Whether a standard validator, reading only `schema` (a part of the document, its `$ref`s to named schemas resolved in the document), finds a value valid. */
export function schemaAccepts(schema: JsonSchema): (value: unknown) => boolean {
  const validate = ajv.compile({ components: openApiDocument.components, $defs: { it: schema }, $ref: '#/$defs/it' });
  return (value) => validate(value);
}

/** Whether a standard validator, reading only the document, finds `body` valid for the operation. */
export const documentAccepts = (method: string, path: string) => schemaAccepts(documentedBodySchema(method, path));

/** Whether the API's own validator accepts a body: `parse` returns, or throws `validation_error`. */
export const validatorAccepts = (parse: (body: unknown) => unknown) => (body: unknown): boolean => {
  try {
    parse(body);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.code === 'validation_error') return false;
    throw error;
  }
};

/**
 * Text of Basic Multilingual Plane characters. JSON Schema's `maxLength` counts code points and
 * zod's counts UTF-16 code units: they agree on such text, and differ only for characters outside
 * the plane (one code point, two units), which the document cannot express.
 */
export const bmpText = (constraints: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({
    ...constraints,
    unit: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...'aZ09_-.*/ :') },
      fc.integer({ min: 0, max: 0xd7ff }).map((code) => String.fromCharCode(code)),
      fc.integer({ min: 0xe000, max: 0xffff }).map((code) => String.fromCharCode(code)),
    ),
  });

/**
 * Strings just either side of a length bound (`limit - 1`, `limit`, `limit + 1` characters): runs of
 * `a`, which fit most patterns, and random text.
 */
export const aroundLength = (limit: number) =>
  fc.constantFrom(limit - 1, limit, limit + 1).chain((length) =>
    fc.oneof(fc.constant('a'.repeat(length)), bmpText({ minLength: length, maxLength: length })));

/** JSON values of every type, for fields that must refuse most of them. */
export const anyJsonValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 4 }),
  fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 2 }), { maxKeys: 2 }),
);

/**
 * Objects built from `valid` field values, and the same objects with one thing wrong or at a
 * limit: one field from `edge`, one field left out (of `droppable`, default all), an unknown
 * field, or not an object at all.
 */
export function nearValid(
  valid: Record<string, fc.Arbitrary<unknown>>,
  options: { required?: string[]; edge: Record<string, fc.Arbitrary<unknown>>; droppable?: string[] },
): fc.Arbitrary<unknown> {
  const whole = fc.record(valid, { requiredKeys: options.required ?? Object.keys(valid) }) as fc.Arbitrary<Record<string, unknown>>;
  const withField = (names: string[], value: (name: string) => fc.Arbitrary<unknown>) =>
    fc.tuple(whole, fc.constantFrom(...names)).chain(([object, name]) => value(name).map((v) => ({ ...object, [name]: v })));
  return fc.oneof(
    { weight: 4, arbitrary: whole },
    { weight: 4, arbitrary: withField(Object.keys(options.edge), (name) => options.edge[name]!) },
    fc.tuple(whole, fc.constantFrom(...(options.droppable ?? Object.keys(valid)))).map(([object, name]) => {
      const { [name]: _dropped, ...rest } = object;
      return rest;
    }),
    withField(['unknown', 'id', 'secret_sealed', 'api_key_hash'], () => fc.constant('x')),
    anyJsonValue,
  );
}

/** What the handler sees: the body after it crossed the wire as JSON. */
export const overTheWire = <T>(body: T): unknown => JSON.parse(JSON.stringify(body));
