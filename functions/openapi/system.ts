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
  getConsole: {
    description: 'The console: a web page to sign in (a bearer token or an API key, kept in the tab only) and manage triggers through this API. Open `/console#token=<token>` to sign in with a token without sending it to the server. No credentials.',
    responses: {
      '200': { description: 'The console page', content: { 'text/html': { type: 'string' } } },
    },
  },
  getConsoleAsset: {
    description: "A script or style sheet of the console, named by its content's hash and cacheable for a year. No credentials.",
    parameters: [{ name: 'asset', in: 'path', required: true, description: 'File name, e.g. `app.3FJ2K6QX.js`.', schema: { type: 'string' } }],
    responses: {
      '200': { description: 'The file', content: { 'text/javascript': { type: 'string' }, 'text/css': { type: 'string' } } },
      '404': errorBody('not_found'),
    },
  },
};
