import { errorBody, type OperationDocs } from './types.js';

export const systemDocs: OperationDocs = {
  getHealth: {
    description: 'Answers 200 once the service is ready to serve. No credentials. The local stack adds `backlog`: how many acknowledged events wait for their flow (queued, running, or waiting out a retry) and how long the oldest has waited, from its own ledger of the flow queue. Deployed, the answer has no `backlog`: the flow queue\'s CloudWatch metrics show it (the dashboard, and the `FlowQueueOldestMessage` alarm).',
    responses: {
      '200': {
        description: 'Ready',
        content: {
          'application/json': {
            type: 'object',
            required: ['status'],
            properties: {
              status: { const: 'ok' },
              backlog: {
                type: 'object',
                description: 'Local stack only.',
                required: ['waiting', 'oldest_age_seconds'],
                properties: {
                  waiting: { type: 'integer', minimum: 0, description: 'Acknowledged events whose flow has not reached an outcome yet.' },
                  oldest_age_seconds: { type: ['integer', 'null'], minimum: 0, description: 'Seconds since the oldest of them was queued; null when none waits.' },
                },
              },
            },
          },
        },
      },
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
  getApiReference: {
    description: 'This API reference, rendered from `/openapi.json` in the browser (Scalar). No credentials.',
    responses: {
      '200': { description: 'The reference page', content: { 'text/html': { type: 'string' } } },
    },
  },
  getApiReferenceAsset: {
    description: "A script or style sheet of the reference page, named by its content's hash and cacheable for a year. No credentials.",
    parameters: [{ name: 'asset', in: 'path', required: true, description: 'File name, e.g. `scalar.Zk3q9V0aXw.js`.', schema: { type: 'string' } }],
    responses: {
      '200': { description: 'The file', content: { 'text/javascript': { type: 'string' }, 'text/css': { type: 'string' } } },
      '404': errorBody('not_found'),
    },
  },
};
