import type { OperationDocs } from './types.js';

export const triggersDocs: OperationDocs = {};
