/** A JSON Schema (OpenAPI 3.1 uses JSON Schema 2020-12). */
export type Schema = Record<string, unknown>;

/** What an area documents about one operation beyond what the route table already says. */
export interface OperationDoc {
  description?: string;
  /** Kept for existing callers; another operation does the same better (OpenAPI's `deprecated`). */
  deprecated?: boolean;
  /** Query and header parameters; a `path` entry describes the route's path parameter of that name. */
  parameters?: { name: string; in: 'query' | 'header' | 'path'; required?: boolean; description?: string; schema: Schema }[];
  /** Request body schemas by media type. */
  requestBody?: { required?: boolean; content: Record<string, Schema> };
  /** Responses by status: a description and, when there is a body, its schema by media type. */
  responses: Record<string, { description: string; headers?: Record<string, Schema>; content?: Record<string, Schema> }>;
}

export type OperationDocs = Record<string, OperationDoc>;

/** The schemas named so far, as `components/schemas` lists them; filled as the areas' docs load. */
const NAMED = new Map<string, Schema>();

/**
 * Names `schema` in `components/schemas` and answers a `$ref` to it, so a generated client has one
 * type for it (`Bucket`, `Trigger`) wherever it appears. A name holds one schema: naming another
 * under it is a mistake in the docs, thrown when they load.
 */
export function named(name: string, schema: Schema): Schema {
  const known = NAMED.get(name);
  if (known !== undefined && JSON.stringify(known) !== JSON.stringify(schema)) throw new Error(`the OpenAPI schema ${name} is named twice, differently`);
  NAMED.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

/** Every schema `named` so far, by name. */
export const namedSchemas = (): Record<string, Schema> => Object.fromEntries([...NAMED].sort(([a], [b]) => a.localeCompare(b)));

export const errorBody = (description: string) => ({ description, content: { 'application/json': { $ref: '#/components/schemas/Error' } } });
export const dataBody = (description: string, data: Schema) => ({
  description,
  content: { 'application/json': { type: 'object', required: ['data'], properties: { data } } },
});

/** `limit` and `cursor`, as every list route takes them. */
export const pageParameters = (what: string, limit: { max: number; default: number } = { max: 500, default: 50 }): NonNullable<OperationDoc['parameters']> => [
  { name: 'limit', in: 'query', description: `${what} per page.`, schema: { type: 'integer', minimum: 1, maximum: limit.max, default: limit.default } },
  { name: 'cursor', in: 'query', description: 'The `next_cursor` of the previous page; a malformed cursor is 400.', schema: { type: 'string' } },
];

/** A list route's 200: `{"data": {"<things>": [...], "next_cursor": ...}}`. */
export const pageBody = (description: string, things: string, item: Schema) =>
  dataBody(description, {
    type: 'object',
    required: [things, 'next_cursor'],
    properties: {
      [things]: { type: 'array', items: item },
      next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; `null` on the last page.' },
    },
  });
