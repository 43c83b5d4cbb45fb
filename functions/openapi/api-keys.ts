import type { OperationDocs } from './types.js';

export const apiKeysDocs: OperationDocs = {};
