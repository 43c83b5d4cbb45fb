/**
 * A flow's Amazon States Language definition as a graph to draw and to read: its states (with what
 * each calls, waits for, retries), the transitions between them (Next, each Choice rule with its
 * condition in words, Default, Catch), and Parallel branches and Map iterations as graphs of their
 * own. Pure: no DOM, so the picture's model is tested in Node.
 * https://states-language.net/spec.html
 */

export type EdgeKind = 'next' | 'choice' | 'default' | 'catch';

export interface FlowEdge {
  from: string;
  to: string;
  kind: EdgeKind;
  /** A Choice rule's condition, `otherwise` for a Choice's Default, the errors a Catch takes. */
  label?: string;
  /** A Catch's `ErrorEquals`. */
  errors?: string[];
}

export interface RetryRule {
  errors: string[];
  maxAttempts: number;
  intervalSeconds: number;
  backoffRate: number;
  /** The whole rule in words. */
  words: string;
}

export interface FlowState {
  name: string;
  /** Task, Pass, Choice, Wait, Succeed, Fail, Parallel or Map. */
  type: string;
  /** What a Task calls, in words: `function summarize`, `Lambda my-function`, `SNS publish`. */
  calls?: string;
  /** Short facts: what a Wait waits for, what a Map iterates, a Fail's error, a Task's timeout. */
  notes: string[];
  retries: RetryRule[];
  /** It ends the flow (or its branch): `End`, Succeed and Fail. */
  end: boolean;
  comment?: string;
  /** A Parallel's branches (`Branch 1`, …) or a Map's item processor (`Each item`). */
  branches: { label: string; graph: FlowGraph }[];
}

export interface FlowGraph {
  startAt: string;
  /** From `startAt` along the transitions, then any state nothing reaches, in file order. */
  states: FlowState[];
  edges: FlowEdge[];
  /** What the definition gets wrong (a transition to no state): drawn without, and said in words. */
  problems: string[];
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const number = (value: unknown, fallback: number): number => (typeof value === 'number' && Number.isFinite(value) ? value : fallback);
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/** `a, b or c` */
export function listWords(items: readonly string[], last = 'or'): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${last} ${items.at(-1)}`;
}

/** A JSONata expression as written, without its `{% … %}`. */
const jsonata = (expression: string) => expression.trim().replace(/^\{%\s*/, '').replace(/\s*%\}$/, '');

const OPERATORS: Record<string, string> = { Equals: '==', LessThan: '<', GreaterThan: '>', LessThanEquals: '<=', GreaterThanEquals: '>=' };
const COMPARISON = /^(String|Numeric|Boolean|Timestamp)(Equals|LessThan|GreaterThan|LessThanEquals|GreaterThanEquals)(Path)?$/;
const TYPE_TESTS: Record<string, string> = { IsString: 'a string', IsNumeric: 'a number', IsBoolean: 'a boolean', IsTimestamp: 'a timestamp' };
/** A rule's fields that are not its condition. */
const NOT_CONDITION = new Set(['Next', 'Comment', 'Assign', 'Output']);

/**
 * A Choice rule's condition as one reads it: `$.type == "invoice.paid"`, `$.n >= 10`,
 * `$.type matches "customer.*"`, `$.x is present`, joined with `and`, `or` and `not (…)`; a JSONata
 * `Condition` as written. A rule this does not know is shown as its JSON.
 */
export function conditionText(rule: unknown): string {
  if (!isObject(rule)) return JSON.stringify(rule) ?? '';
  const nested = (child: unknown) => {
    const words = conditionText(child);
    return isObject(child) && (Array.isArray(child.And) || Array.isArray(child.Or)) ? `(${words})` : words;
  };
  if (Array.isArray(rule.And)) return rule.And.map(nested).join(' and ');
  if (Array.isArray(rule.Or)) return rule.Or.map(nested).join(' or ');
  if (rule.Not !== undefined) return `not (${conditionText(rule.Not)})`;
  if (typeof rule.Condition === 'string') return jsonata(rule.Condition);
  const variable = text(rule.Variable) ?? '?';
  for (const [key, value] of Object.entries(rule)) {
    const comparison = COMPARISON.exec(key);
    if (comparison) return `${variable} ${OPERATORS[comparison[2]!]} ${comparison[3] ? String(value) : JSON.stringify(value)}`;
    if (key === 'StringMatches') return `${variable} matches ${JSON.stringify(value)}`;
    if (key === 'IsPresent') return `${variable} is ${value === false ? 'absent' : 'present'}`;
    if (key === 'IsNull') return `${variable} is ${value === false ? 'not null' : 'null'}`;
    if (key in TYPE_TESTS) return `${variable} is ${value === false ? 'not ' : ''}${TYPE_TESTS[key]}`;
  }
  return JSON.stringify(Object.fromEntries(Object.entries(rule).filter(([key]) => !NOT_CONDITION.has(key))));
}

/** `${Function.<name>}`: a project function as the flows in `flows/` name one (a definition substitution). */
const FUNCTION_PLACEHOLDER = /^\$\{Function\.([^}]+)\}$/;
const LAMBDA_ARN = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:([^:]+)/;
const SERVICE_NAMES: Record<string, string> = {
  sns: 'SNS', sqs: 'SQS', dynamodb: 'DynamoDB', events: 'EventBridge', states: 'Step Functions', http: 'HTTP', ecs: 'ECS', glue: 'Glue',
  batch: 'Batch', athena: 'Athena', bedrock: 'Bedrock', sagemaker: 'SageMaker', codebuild: 'CodeBuild', apigateway: 'API Gateway', 'aws-sdk': 'AWS SDK',
};

/** A Lambda function as a Task names it: the project's own by its placeholder, others by name. */
function functionWords(name: string): string {
  const placeholder = FUNCTION_PLACEHOLDER.exec(name);
  if (placeholder) return `function ${placeholder[1]}`;
  return `Lambda ${LAMBDA_ARN.exec(name)?.[1] ?? name}`;
}

/**
 * What a Task calls, in words: `function summarize` (the project's own, `"${Function.summarize}"`),
 * `Lambda my-function` (by ARN or name), `SNS publish`, `AWS SDK s3:getObject`, `activity …`.
 */
export function taskTarget(state: Json): string | undefined {
  const resource = text(state.Resource);
  if (resource === undefined) return undefined;
  const args = isObject(state.Arguments) ? state.Arguments : isObject(state.Parameters) ? state.Parameters : {};
  const service = /^arn:[^:]+:states:::([^:]+):([^.]+)/.exec(resource);
  if (service?.[1] === 'lambda' && service[2] === 'invoke') {
    if (typeof args.FunctionName === 'string' && !args.FunctionName.startsWith('{%')) return functionWords(args.FunctionName);
    const dynamic = text(args['FunctionName.$']) ?? text(args.FunctionName);
    return dynamic ? `Lambda named by ${jsonata(dynamic)}` : 'Lambda';
  }
  if (service?.[1] === 'aws-sdk') {
    const [sdkService, action] = resource.slice(resource.indexOf('aws-sdk:') + 'aws-sdk:'.length).split(':');
    return `AWS SDK ${sdkService}:${(action ?? '').split('.')[0]}`;
  }
  if (service) return `${SERVICE_NAMES[service[1]!] ?? service[1]} ${service[2]}`;
  if (FUNCTION_PLACEHOLDER.test(resource) || LAMBDA_ARN.test(resource)) return functionWords(resource);
  const activity = /:activity:(.+)$/.exec(resource);
  if (activity) return `activity ${activity[1]}`;
  return resource;
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

function retryRule(rule: unknown): RetryRule | undefined {
  if (!isObject(rule)) return undefined;
  const errors = strings(rule.ErrorEquals);
  const maxAttempts = number(rule.MaxAttempts, 3);
  const intervalSeconds = number(rule.IntervalSeconds, 1);
  const backoffRate = number(rule.BackoffRate, 2);
  const on = listWords(errors);
  const words = maxAttempts === 0
    ? `never retries ${on}`
    : `retries ${on} up to ${plural(maxAttempts, 'time')}, ${intervalSeconds} s after the first failure${backoffRate === 1 ? '' : `, ×${backoffRate} each time after`}`;
  return { errors, maxAttempts, intervalSeconds, backoffRate, words };
}

/** A value that is a number, a path (`SecondsPath`) or a JSONata expression, in words. */
const amount = (state: Json, field: string): string | undefined => {
  const value = state[field];
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return jsonata(value);
  return text(state[`${field}Path`]);
};

function notesOf(state: Json): string[] {
  const notes: string[] = [];
  switch (state.Type) {
    case 'Wait': {
      const seconds = amount(state, 'Seconds');
      const until = amount(state, 'Timestamp');
      if (seconds !== undefined) notes.push(`waits ${seconds} s`);
      if (until !== undefined) notes.push(`waits until ${until}`);
      break;
    }
    case 'Fail': {
      const error = text(state.Error) ?? text(state.ErrorPath);
      if (error) notes.push(`fails with ${jsonata(error)}`);
      break;
    }
    case 'Map': {
      const items = text(state.Items) ?? text(state.ItemsPath);
      const reader = isObject(state.ItemReader) ? text(state.ItemReader.Resource) : undefined;
      notes.push(reader ? `for each item read by ${taskTarget({ Resource: reader })}` : `for each item of ${items ? jsonata(items) : '$'}`);
      if (typeof state.MaxConcurrency === 'number' && state.MaxConcurrency > 0) notes.push(`at most ${state.MaxConcurrency} at once`);
      const processor = isObject(state.ItemProcessor) ? state.ItemProcessor : undefined;
      if (isObject(processor?.ProcessorConfig) && processor.ProcessorConfig.Mode === 'DISTRIBUTED') notes.push('distributed');
      break;
    }
    case 'Parallel':
      notes.push(`${plural(Array.isArray(state.Branches) ? state.Branches.length : 0, 'branch', 'branches')} at once`);
      break;
  }
  if (typeof state.TimeoutSeconds === 'number' && state.Type === 'Task') notes.push(`times out after ${state.TimeoutSeconds} s`);
  return notes;
}

function branchesOf(state: Json): FlowState['branches'] {
  if (state.Type === 'Parallel' && Array.isArray(state.Branches)) {
    return state.Branches.map((branch, index) => ({ label: `Branch ${index + 1}`, graph: flowGraph(branch) }));
  }
  const processor = state.Type === 'Map' ? (state.ItemProcessor ?? state.Iterator) : undefined;
  return processor === undefined ? [] : [{ label: 'Each item', graph: flowGraph(processor) }];
}

/** The transitions out of one state, in the order the definition gives them. */
function transitionsOf(name: string, state: Json): FlowEdge[] {
  const edges: FlowEdge[] = [];
  if (state.Type === 'Choice') {
    for (const rule of Array.isArray(state.Choices) ? state.Choices : []) {
      if (isObject(rule) && typeof rule.Next === 'string') edges.push({ from: name, to: rule.Next, kind: 'choice', label: conditionText(rule) });
    }
    if (typeof state.Default === 'string') edges.push({ from: name, to: state.Default, kind: 'default', label: 'otherwise' });
  }
  if (typeof state.Next === 'string') edges.push({ from: name, to: state.Next, kind: 'next' });
  for (const rule of Array.isArray(state.Catch) ? state.Catch : []) {
    if (!isObject(rule) || typeof rule.Next !== 'string') continue;
    const errors = strings(rule.ErrorEquals);
    edges.push({ from: name, to: rule.Next, kind: 'catch', label: `catch ${errors.join(', ')}`, errors });
  }
  return edges;
}

/**
 * The graph of a definition (or of a Parallel branch or Map processor: anything with `StartAt`
 * and `States`). Never throws: what is missing or malformed is left out, and a transition to no
 * state is named in `problems`.
 */
export function flowGraph(definition: unknown): FlowGraph {
  const root = isObject(definition) ? definition : {};
  const raw = isObject(root.States) ? root.States : {};
  const startAt = text(root.StartAt) ?? '';
  const problems: string[] = [];
  const edges: FlowEdge[] = [];
  const byName = new Map<string, FlowState>();
  for (const [name, value] of Object.entries(raw)) {
    const state = isObject(value) ? value : {};
    const type = text(state.Type) ?? 'Unknown';
    byName.set(name, {
      name,
      type,
      ...(type === 'Task' && { calls: taskTarget(state) }),
      notes: notesOf(state),
      retries: (Array.isArray(state.Retry) ? state.Retry : []).map(retryRule).filter((rule): rule is RetryRule => rule !== undefined),
      end: state.End === true || type === 'Succeed' || type === 'Fail',
      ...(typeof state.Comment === 'string' && { comment: state.Comment }),
      branches: branchesOf(state),
    });
    for (const edge of transitionsOf(name, state)) {
      if (Object.hasOwn(raw, edge.to)) edges.push(edge);
      else problems.push(`${name} goes to "${edge.to}", which is not a state`);
    }
  }
  if (!byName.has(startAt)) problems.unshift(`StartAt names "${startAt}", which is not a state`);

  // Depth first from StartAt, in transition order: the order a reader follows the flow in.
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (start: string) => {
    const stack = [start];
    while (stack.length > 0) {
      const name = stack.pop()!;
      if (seen.has(name) || !byName.has(name)) continue;
      seen.add(name);
      order.push(name);
      stack.push(...edges.filter((edge) => edge.from === name).map((edge) => edge.to).reverse());
    }
  };
  visit(startAt);
  for (const name of byName.keys()) visit(name);
  return { startAt, states: order.map((name) => byName.get(name)!), edges, problems };
}

/** One line of the text alternative, with a Parallel's or Map's branches as lists of their own. */
export interface OutlineItem {
  text: string;
  branches: { label: string; items: OutlineItem[] }[];
}

const sentence = (words: string) => `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
const TRANSITION_ORDER: EdgeKind[] = ['choice', 'default', 'catch', 'next'];

/**
 * The flow in words, for screen readers and anyone who would rather read: where it starts, then
 * each state with what it does, retries, and where each transition goes.
 */
export function flowOutline(graph: FlowGraph, scope: 'flow' | 'branch' = 'flow'): OutlineItem[] {
  const items: OutlineItem[] = [{ text: `Starts at ${graph.startAt}.`, branches: [] }];
  for (const state of graph.states) {
    const words = [`${state.name}, a ${state.type}${state.calls ? ` that calls ${state.calls}` : ''}.`];
    words.push(...state.notes.map(sentence), ...state.retries.map((rule) => `It ${rule.words}.`));
    const out = graph.edges.filter((edge) => edge.from === state.name).sort((a, b) => TRANSITION_ORDER.indexOf(a.kind) - TRANSITION_ORDER.indexOf(b.kind));
    for (const edge of out) {
      if (edge.kind === 'choice') words.push(`If ${edge.label}, go to ${edge.to}.`);
      else if (edge.kind === 'default') words.push(`Otherwise, go to ${edge.to}.`);
      else if (edge.kind === 'catch') words.push(`If it fails with ${listWords(edge.errors ?? [])}, go to ${edge.to}.`);
      else words.push(`Then go to ${edge.to}.`);
    }
    if (state.end) words.push(state.type === 'Fail' ? `Then the ${scope} fails.` : `Then the ${scope} ends.`);
    if (state.comment) words.push(`Comment: ${state.comment}`);
    items.push({ text: words.join(' '), branches: state.branches.map((branch) => ({ label: branch.label, items: flowOutline(branch.graph, 'branch') })) });
  }
  items.push(...graph.problems.map((problem) => ({ text: `Problem: ${problem}.`, branches: [] })));
  return items;
}
