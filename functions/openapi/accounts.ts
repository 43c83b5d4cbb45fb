import type { OperationDocs } from './types.js';

export const accountsDocs: OperationDocs = {};
