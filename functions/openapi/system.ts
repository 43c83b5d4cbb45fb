import type { OperationDocs } from './types.js';

export const systemDocs: OperationDocs = {};
