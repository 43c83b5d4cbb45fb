import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Flows on disk, for the CDK stack (at synth) and the local stack alike: each flow is one
 * `<name>.asl.json` definition in a flows folder.
 */
export const FLOW_FILE_SUFFIX = '.asl.json';

/** Where flow `name`'s definition is in `dir`. */
export const flowFile = (dir: string, name: string): string => join(dir, name + FLOW_FILE_SUFFIX);

/** The flows defined in the folders, each name once, sorted. */
export function listFlowNames(dirs: string | readonly string[]): string[] {
  const names = new Set<string>();
  for (const dir of typeof dirs === 'string' ? [dirs] : dirs) {
    for (const file of readdirSync(dir)) if (file.endsWith(FLOW_FILE_SUFFIX)) names.add(file.slice(0, -FLOW_FILE_SUFFIX.length));
  }
  return [...names].sort();
}

/** Flow `name`'s definition as its file holds it, from the first folder that has one; undefined when none does. */
export async function readFlowDefinition(dirs: readonly string[], name: string): Promise<string | undefined> {
  for (const dir of dirs) {
    try {
      return await readFile(flowFile(dir, name), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return undefined;
}
