import { readFile } from 'node:fs/promises';
import { FLOW_DEFINITIONS_FILE, type FlowDefinitionSource } from '../domain/flows/flow-definitions.js';
import { onFirstUse } from './lazy.js';

/**
 * The definitions the bundling wrote beside the deployed function's code
 * (`lib/constructs/esm-bundle.ts`), read with the first request for one, never at init.
 */
export function bundledFlowDefinitions(): FlowDefinitionSource {
  const all = onFirstUse(async () =>
    JSON.parse(await readFile(new URL(`./${FLOW_DEFINITIONS_FILE}`, import.meta.url), 'utf8')) as Record<string, Record<string, unknown>>);
  return async (name) => {
    const definitions = await all();
    return Object.hasOwn(definitions, name) ? definitions[name] : undefined;
  };
}
