import * as z from 'zod/mini';
import type { Schema } from './types.js';

/**
 * Descriptions for the document, attached to the zod schemas that validate requests. They live in
 * a registry of the docs rather than in the schemas' own metadata, so the handlers that validate
 * do not carry the document's prose in their bundles.
 */
export type Descriptions = z.core.$ZodRegistry<{ description: string }>;

export const descriptions = (): Descriptions => z.registry<{ description: string }>();

/**
 * The JSON Schema (2020-12, the dialect of OpenAPI 3.1) of what `schema` accepts: zod's input
 * side, so fields with a default are optional and a transform (lower-casing a header name) is
 * documented by what it accepts. Refinements have no JSON Schema form; the descriptions say them
 * in words.
 */
export function jsonSchemaOf(schema: z.core.$ZodType, described: Descriptions): Schema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', metadata: described });
  return compactNullables(json) as Schema;
}

/**
 * zod writes a nullable object as `anyOf: [{type: "object", ...}, {type: "null"}]`; the same thing
 * as `type: ["object", "null"]` reads better in documentation tools. Only a branch whose single
 * type is not narrowed by `enum` or `const` (which would then refuse the null) is folded.
 */
function compactNullables(json: unknown): unknown {
  if (Array.isArray(json)) return json.map(compactNullables);
  if (typeof json !== 'object' || json === null) return json;
  const { anyOf, ...rest } = Object.fromEntries(Object.entries(json).map(([key, value]) => [key, compactNullables(value)])) as Schema;
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return anyOf === undefined ? rest : { ...rest, anyOf };
  const [branch, other] = anyOf as Schema[];
  const foldable = typeof branch?.type === 'string' && !('enum' in branch) && !('const' in branch) && !('anyOf' in branch);
  if (!foldable || JSON.stringify(other) !== '{"type":"null"}') return { ...rest, anyOf };
  return { ...branch, ...rest, type: [branch.type, 'null'] };
}
