// `npm run client:generate`: writes the client's types from the OpenAPI document (client/generate.ts).
import { writeFileSync } from 'node:fs';
import { generateClientTypes, GENERATED_TYPES_PATH } from '../client/generate.js';

writeFileSync(GENERATED_TYPES_PATH, await generateClientTypes());
console.log(`wrote ${GENERATED_TYPES_PATH}`);
