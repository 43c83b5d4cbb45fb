import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The project's own functions that flows call: `<flows dir>/functions/<name>.ts`, each exporting
 * `handler`. A flow names one in its definition as `"${Function.<name>}"`, a definition
 * substitution that CloudFormation fills in with the function's ARN when deployed and the local
 * stack with a local ARN it runs in process. Nothing here imports CDK, so the local stack reads it too.
 */

/** Folder of flow functions inside a flows folder. */
export const FLOW_FUNCTIONS_FOLDER = 'functions';
/** The settings table of flow functions, in that folder. */
export const FLOW_FUNCTION_SETTINGS_FILE = 'settings.json';
/** Function names as flows may write them: also a safe part of a construct id and a local ARN. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** `${Function.<name>}`, as a definition substitution is written. */
const FUNCTION_REFERENCE = /\$\{Function\.([^}]*)\}/g;

/** Every flow function gets this much time and memory: a flow's Task waits for it, an express flow runs at most 5 minutes. */
export const FLOW_FUNCTION_TIMEOUT_SECONDS = 30;
export const FLOW_FUNCTION_MEMORY_MB = 256;

export interface FlowFunctionFile {
  name: string;
  /** Absolute path of the source file. */
  file: string;
}

/** The definition substitution key of a function: `Function.<name>`. */
export const functionSubstitutionKey = (name: string): string => `Function.${name}`;

/** The flow functions of a flows folder, sorted by name; none when it has no `functions/` folder. */
export function listFlowFunctions(flowsDir: string): FlowFunctionFile[] {
  const dir = join(flowsDir, FLOW_FUNCTIONS_FOLDER);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.endsWith('.test.ts'))
    .map((file) => {
      const name = file.slice(0, -'.ts'.length);
      if (!FUNCTION_NAME.test(name)) throw new Error(`flow function ${join(dir, file)}: the name must match ${FUNCTION_NAME}`);
      return { name, file: join(dir, file) };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The functions a definition names through `${Function.<name>}`, sorted, each once. */
export function functionReferences(definition: string): string[] {
  return [...new Set([...definition.matchAll(FUNCTION_REFERENCE)].map((match) => match[1]!))].sort();
}

/**
 * Checks that every function a flow names exists.
 * @throws Error naming the flow's file, the function and where its source should be.
 */
export function checkFunctionReferences(file: string, definition: string, known: ReadonlySet<string>, flowsDir: string): string[] {
  const names = functionReferences(definition);
  for (const name of names) {
    if (!known.has(name)) {
      throw new Error(`flow definition ${file} names function "${name}" (\${Function.${name}}), but there is no ${join(flowsDir, FLOW_FUNCTIONS_FOLDER, `${name}.ts`)}`);
    }
  }
  return names;
}

/** Replaces each `${Function.<name>}` with what `value(name)` gives. */
export function substituteFunctions(definition: string, value: (name: string) => string): string {
  return definition.replace(FUNCTION_REFERENCE, (_, name: string) => value(name));
}

/** One setting of flow functions: a variable, the CDK context key that sets it when deployed, and who gets it. */
export interface FlowFunctionSetting {
  /** CDK context key; locally the variable itself, from the environment of `npm start`. */
  context: string;
  /** The flow functions that receive it. */
  functions: string[];
  description?: string;
}

/**
 * The settings table of flow functions, `<flows dir>/functions/settings.json`: variable name →
 * {@link FlowFunctionSetting}. A function receives only the settings that name it.
 * @throws Error naming the file when it is malformed.
 */
export function readFlowFunctionSettings(flowsDir: string): Record<string, FlowFunctionSetting> {
  const file = join(flowsDir, FLOW_FUNCTIONS_FOLDER, FLOW_FUNCTION_SETTINGS_FILE);
  if (!existsSync(file)) return {};
  let table: unknown;
  try {
    table = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`flow function settings ${file} is not JSON: ${(error as Error).message}`);
  }
  if (typeof table !== 'object' || table === null || Array.isArray(table)) throw new Error(`flow function settings ${file} must be an object of variable → { context, functions }`);
  for (const [variable, setting] of Object.entries(table as Record<string, unknown>)) {
    const s = setting as Partial<FlowFunctionSetting> | null;
    if (!/^[A-Z][A-Z0-9_]*$/.test(variable)) throw new Error(`flow function settings ${file}: "${variable}" is not an environment variable name (A-Z, 0-9, _)`);
    if (typeof s?.context !== 'string' || !Array.isArray(s.functions) || !s.functions.every((f) => typeof f === 'string')) {
      throw new Error(`flow function settings ${file}: ${variable} needs "context" (a CDK context key) and "functions" (names of flow functions)`);
    }
  }
  return table as Record<string, FlowFunctionSetting>;
}

/** The settings one flow function receives, valued from `values` (by variable). */
export function settingsOf(name: string, table: Record<string, FlowFunctionSetting>, value: (variable: string, setting: FlowFunctionSetting) => string | undefined): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const [variable, setting] of Object.entries(table)) {
    if (!setting.functions.includes(name)) continue;
    const v = value(variable, setting);
    if (v !== undefined && v !== '') settings[variable] = v;
  }
  return settings;
}
