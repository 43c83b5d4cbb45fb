/**
 * The client's types, generated from the OpenAPI document the product builds (no server needed):
 * `npm run client:generate` writes them, and test/client/package.test.ts fails when the committed
 * file differs from a fresh generation, so the client and the document cannot drift.
 */
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { buildOpenApiDocument } from '../functions/openapi/document.js';

/** Where the generated types live, relative to the repository root. */
export const GENERATED_TYPES_PATH = 'client/src/generated/openapi.ts';


/** The text of {@link GENERATED_TYPES_PATH} for the document as the product builds it now. */
export async function generateClientTypes(): Promise<string> {
  const document = buildOpenApiDocument() as unknown as { info: object; paths: Record<string, Record<string, { operationId: string }>> };
  // `defaultNonNullable: false`: a field with a default may be left out of a request (`StreamInput`, `TriggerInput`).
  // `version` changes with every release; the types do not depend on it, so it is left out to keep the file stable.
  const ast = await openapiTS({ ...document, info: { ...document.info, version: '' } } as never, { exportType: true, alphabetize: false, defaultNonNullable: false });
  // openapi-typescript writes types only; where each operation is called is data the client reads at run time.
  const table: Record<string, { method: string; path: string }> = {};
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) table[operation.operationId] = { method: method.toUpperCase(), path };
  }
  const operationsTable =
    '/** Each operation\'s method and path template, by `operationId`. */\n' +
    `export const OPERATIONS = ${JSON.stringify(table, null, 4)} as const;\n`;
  return `${COMMENT_HEADER}// Regenerate with \`npm run client:generate\` (client/generate.ts); a test fails when this file is stale.\n\n${astToString(ast)}\n${operationsTable}`;
}
