import { errorBody, type OperationDocs } from './types.js';

export const systemDocs: OperationDocs = {
  getHealth: {
    description: 'Answers 200 once the service is ready to serve. No credentials.',
    responses: {
      '200': { description: 'Ready', content: { 'application/json': { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } } } },
    },
  },
  getOpenApi: {
    description: 'This document. Routes that match no operation answer 404 `not_found`, or 405 `method_not_allowed` with `Allow` when the path exists with other methods.',
    responses: {
      '200': { description: 'The OpenAPI 3.1 document', content: { 'application/json': { type: 'object' } } },
      '404': errorBody('not_found'),
    },
  },
};
