import type * as z from 'zod/mini';
import { AppError } from './errors.js';
import { didYouMean } from './nearest-name.js';

export { didYouMean, nearestName } from './nearest-name.js';

/*
 * The words of every 400 `validation_error` that a zod schema decides: the field, what it takes
 * (the shape, the allowed values, the known fields) and, for a misspelt name, the nearest one.
 * zod/mini ships no messages (its locales are left out to keep bundles small), so each kind of
 * issue is put in words here, once, for every route; our own refinements carry theirs.
 * Only `import type` of zod: a handler that validates by hand pays nothing for this module.
 */

/** `"a", "b", "c"`, at most `max` of them and how many more. */
export function listed(values: readonly unknown[], max = 60): string {
  const shown = values.slice(0, max).map((v) => JSON.stringify(v)).join(', ');
  return values.length > max ? `${shown} and ${values.length - max} more` : shown;
}

/** What a JSON value is, as a caller would say it: `a string`, `a list`, `null`. */
function kindOf(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'an object';
  if (typeof input === 'number') return Number.isInteger(input) ? 'an integer' : 'a number';
  return typeof input === 'string' ? 'a string' : typeof input === 'boolean' ? 'a boolean' : `a ${typeof input}`;
}

type AnySchema = z.core.$ZodType;
type Def = { type: string; innerType?: AnySchema; in?: AnySchema; shape?: Record<string, AnySchema>; element?: AnySchema; options?: AnySchema[]; entries?: Record<string, unknown> };
const defOf = (schema: AnySchema | undefined): Def | undefined => (schema as { _zod?: { def?: Def } } | undefined)?._zod?.def;

/** The schema under its wrappers (optional, nullable, default, a pipe's input side). */
function unwrap(schema: AnySchema | undefined): AnySchema | undefined {
  let current = schema;
  for (let i = 0; i < 10; i++) {
    const def = defOf(current);
    if (!def) return current;
    if (def.innerType && ['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch'].includes(def.type)) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else return current;
  }
  return current;
}

/** The schema of the value at `path` in `root`, where it can be followed (objects and lists). */
function schemaAt(root: AnySchema | undefined, path: readonly PropertyKey[]): AnySchema | undefined {
  let current = unwrap(root);
  for (const key of path) {
    const def = defOf(current);
    if (def?.type === 'object' && def.shape && typeof key === 'string') current = unwrap(def.shape[key]);
    else if (def?.type === 'array' && typeof key === 'number') current = unwrap(def.element);
    else return undefined;
  }
  return current;
}

/** The fields an object schema knows. */
const fieldsOf = (schema: AnySchema | undefined): string[] => {
  const def = defOf(unwrap(schema));
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
};

/** `a string`, `a list of strings`, `an object with a, b`: the shape a schema takes, in words. */
function shapeOf(schema: AnySchema | undefined, depth = 0): string | undefined {
  const def = defOf(unwrap(schema));
  if (!def || depth > 2) return undefined;
  switch (def.type) {
    case 'string': return 'a string';
    case 'number': return 'a number';
    case 'int': return 'an integer';
    case 'boolean': return 'true or false';
    case 'enum': return `one of ${listed(Object.values(def.entries ?? {}))}`;
    case 'array': {
      const element = shapeOf(def.element, depth + 1);
      return element ? `a list of ${element.replace(/^an? /, '').replace(/^string$/, 'strings').replace(/^integer$/, 'integers')}` : 'a list';
    }
    case 'object': return 'a JSON object';
    default: return undefined;
  }
}

const PLURAL_EXAMPLES: Record<string, string> = { string: 'a string', int: 'an integer', number: 'a number', boolean: 'true or false', object: 'a JSON object', array: 'a list', null: 'null' };

/**
 * One issue in words, without its field: `must be one of "acknowledge", "wait", not "ack"`.
 * `root` (the schema the issue came from) lets a message list an object's fields or describe a
 * list's entries; without it the message says what the issue alone says.
 */
export function describeIssue(issue: z.core.$ZodIssue, root?: AnySchema): string {
  const at = root ? schemaAt(root, issue.path) : undefined;
  switch (issue.code) {
    case 'invalid_value': {
      if (issue.input === undefined) return `is required: one of ${listed(issue.values)}`;
      const options = issue.values.filter((v): v is string => typeof v === 'string');
      return `must be one of ${listed(issue.values)}, not ${JSON.stringify(issue.input)}${didYouMean(issue.input, options)}`;
    }
    case 'unrecognized_keys': {
      const known = fieldsOf(at);
      const key = issue.keys[0]!;
      return `is not a known field${didYouMean(key, known)}${known.length > 0 ? `; the fields here are ${known.join(', ')}` : ''}`;
    }
    case 'invalid_type': {
      const expected = shapeOf(at) ?? PLURAL_EXAMPLES[issue.expected] ?? `a ${issue.expected}`;
      if (issue.input === undefined) return `is required: ${expected}`;
      return `must be ${expected}, not ${kindOf(issue.input)}`;
    }
    case 'too_small':
      return issue.origin === 'string' ? `must be at least ${issue.minimum} characters` : issue.origin === 'array' ? `must have at least ${issue.minimum} ${Number(issue.minimum) === 1 ? 'entry' : 'entries'}` : `must be at least ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'string' ? `must be at most ${issue.maximum} characters` : issue.origin === 'array' ? `must have at most ${issue.maximum} entries` : `must be at most ${issue.maximum}`;
    case 'invalid_format':
      // Our own words whatever zod's locale: the full 'zod' import installs its English messages for every
      // schema in the process, which on the local stack (all functions in one process) changed what the
      // trigger routes answered depending on which function had loaded first.
      if (issue.message && issue.message !== 'Invalid input' && !issue.message.startsWith('Invalid ')) return issue.message;
      return issue.format === 'regex' && 'pattern' in issue ? `is not of the expected form (${String(issue.pattern)})` : 'is not of the expected form';
    case 'invalid_union':
      return shapeOf(at) ? `must be ${shapeOf(at)}` : 'is not of any accepted shape';
    default:
      return issue.message && issue.message !== 'Invalid input' ? issue.message : 'is not valid';
  }
}

/** The field an issue is about, as the caller wrote it: `signature.service`, `event_filter.2`, an unknown field itself. */
export function fieldOfIssue(issue: z.core.$ZodIssue, prefix: readonly PropertyKey[] = []): string {
  const path = [...prefix, ...issue.path, ...(issue.code === 'unrecognized_keys' ? [issue.keys[0]!] : [])];
  return path.map(String).join('.');
}

/**
 * The message of an issue with its field: `response_mode: must be one of …`. A refinement of a
 * whole object (no path) carries its own words, which name the fields already.
 */
export function issueMessage(issue: z.core.$ZodIssue, root?: AnySchema, prefix: readonly PropertyKey[] = []): string {
  const field = fieldOfIssue(issue, prefix);
  if (issue.code === 'custom') return field && !issue.message.startsWith(`${field}`) ? `${field}: ${issue.message}` : issue.message;
  return field ? `${field}: ${describeIssue(issue, root)}` : `the body ${describeIssue(issue, root).replace(/^is required: /, 'must be ')}`;
}

/**
 * Parses `input` with `schema`, or throws the 400 `validation_error` whose message names the first
 * problem's field, the shape it takes and the nearest allowed name. Input is reported to the
 * issues, so a missing field is told from a wrong one.
 */
export function parseOrRefuse<S extends AnySchema>(schema: S, input: unknown): z.core.output<S> {
  const parsed = (schema as unknown as { safeParse: (v: unknown, p: { reportInput: boolean }) => { success: boolean; data?: unknown; error?: z.core.$ZodError } })
    .safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data as z.core.output<S>;
  throw validationError(parsed.error!, schema);
}

/** The 400 for a failed parse: its first issue in words, as detail and as the caller's message. */
export function validationError(error: z.core.$ZodError, root?: AnySchema): AppError {
  const issue = error.issues[0];
  const message = issue ? issueMessage(issue, root) : 'the request is not valid';
  return new AppError('validation_error', message, undefined, message);
}
