/** A JSON Schema (OpenAPI 3.1 uses JSON Schema 2020-12). */
export type Schema = Record<string, unknown>;

/** What an area documents about one operation beyond what the route table already says. */
export interface OperationDoc {
  description?: string;
  parameters?: { name: string; in: 'query' | 'header'; required?: boolean; description?: string; schema: Schema }[];
  /** Request body schemas by media type. */
  requestBody?: { required?: boolean; content: Record<string, Schema> };
  /** Responses by status: a description and, when there is a body, its schema by media type. */
  responses: Record<string, { description: string; headers?: Record<string, Schema>; content?: Record<string, Schema> }>;
}

export type OperationDocs = Record<string, OperationDoc>;

export const errorBody = (description: string) => ({ description, content: { 'application/json': { $ref: '#/components/schemas/Error' } } });
export const dataBody = (description: string, data: Schema) => ({
  description,
  content: { 'application/json': { type: 'object', required: ['data'], properties: { data } } },
});
