import type { OperationDocs } from './types.js';

export const kvDocs: OperationDocs = {};
