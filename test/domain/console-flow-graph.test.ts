import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layeredLayout, placeInOrder, type Layout, type LayoutEdge, type LayoutNode, type Point, type Rect } from '../../console/flow-layout.js';
import { conditionText, flowGraph, flowOutline, taskTarget, type FlowGraph } from '../../console/flow-model.js';
import { estimateWidth, flowScene, wrapText, type Scene, type SceneBox } from '../../console/flow-scene.js';
import { checkFlowDefinition } from '../../lib/flow-definition.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PIPELINE_FILE = resolve(ROOT, 'test/fixtures/flows-pictures/order-pipeline.asl.json');
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
const flow = (name: string) => read(resolve(ROOT, 'flows', `${name}.asl.json`));

/** Whether two rectangles share any interior point (touching borders do not count). */
const overlap = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const contains = (outer: Rect, inner: Rect) =>
  inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height;
const onBorder = (p: Point, box: Rect) =>
  p.x >= box.x - 0.01 && p.x <= box.x + box.width + 0.01 && (Math.abs(p.y - box.y) < 0.01 || Math.abs(p.y - box.y - box.height) < 0.01);
/** The smallest rectangle holding a segment: a sideways segment is drawn as a curve inside it. */
const segmentBox = (a: Point, b: Point): Rect => ({ x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), width: Math.abs(a.x - b.x), height: Math.abs(a.y - b.y) });
/** A segment's box shrunk by a hair, so that a segment ending on a border does not count as entering. */
const inside = (a: Point, b: Point, box: Rect) => {
  const s = segmentBox(a, b);
  const e = 0.01;
  return s.x + s.width > box.x + e && s.x < box.x + box.width - e && s.y + s.height > box.y + e && s.y < box.y + box.height - e;
};

describe('the flow model: Amazon States Language as states and transitions', () => {
  it('route-by-type: its four states, each Choice rule labelled with its condition, the Default as otherwise, three ends', () => {
    const graph = flowGraph(flow('route-by-type'));
    expect(graph.startAt).toBe('ByType');
    expect(graph.states.map((s) => [s.name, s.type, s.end])).toEqual([
      ['ByType', 'Choice', false], ['Payment', 'Pass', true], ['Customer', 'Pass', true], ['Other', 'Pass', true],
    ]);
    expect(graph.edges).toEqual([
      { from: 'ByType', to: 'Payment', kind: 'choice', label: '$.trigger.type is present and $.trigger.type matches "payment_intent.*"' },
      { from: 'ByType', to: 'Customer', kind: 'choice', label: '$.trigger.type is present and $.trigger.type matches "customer.*"' },
      { from: 'ByType', to: 'Other', kind: 'default', label: 'otherwise' },
    ]);
    expect(graph.problems).toEqual([]);
  });

  it('conditionText(rule) reads each comparison, test and combination as one would say it', () => {
    const v = '$.type';
    expect(conditionText({ Variable: v, StringEquals: 'invoice.paid' })).toBe('$.type == "invoice.paid"');
    expect(conditionText({ Variable: '$.n', NumericGreaterThanEquals: 10 })).toBe('$.n >= 10');
    expect(conditionText({ Variable: '$.n', NumericLessThanPath: '$.max' })).toBe('$.n < $.max');
    expect(conditionText({ Variable: '$.ok', BooleanEquals: false })).toBe('$.ok == false');
    expect(conditionText({ Variable: '$.at', TimestampGreaterThan: '2024-01-01T00:00:00Z' })).toBe('$.at > "2024-01-01T00:00:00Z"');
    expect(conditionText({ Variable: v, StringMatches: 'customer.*' })).toBe('$.type matches "customer.*"');
    expect(conditionText({ Variable: v, IsPresent: false })).toBe('$.type is absent');
    expect(conditionText({ Variable: v, IsNull: true })).toBe('$.type is null');
    expect(conditionText({ Variable: v, IsNumeric: false })).toBe('$.type is not a number');
    expect(conditionText({ Not: { Variable: v, StringEquals: 'a' } })).toBe('not ($.type == "a")');
    expect(conditionText({
      Or: [{ And: [{ Variable: '$.a', IsPresent: true }, { Variable: '$.a', NumericEquals: 1 }] }, { Variable: '$.b', StringLessThanEquals: 'm' }],
    })).toBe('($.a is present and $.a == 1) or $.b <= "m"');
    expect(conditionText({ Condition: '{% $states.input.total > 100 %}', Next: 'Big' })).toBe('$states.input.total > 100');
    expect(conditionText({ Variable: v, SomethingNew: 1, Next: 'X' })).toBe('{"Variable":"$.type","SomethingNew":1}');
  });

  it('taskTarget(state) names the function or service a Task calls', () => {
    const invoke = (FunctionName: unknown) => taskTarget({ Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName } });
    expect(invoke('${Function.summarize}')).toBe('function summarize');
    expect(invoke('arn:aws:lambda:eu-west-1:123456789012:function:inventory:live')).toBe('Lambda inventory');
    expect(invoke('orders-handler')).toBe('Lambda orders-handler');
    expect(taskTarget({ Resource: 'arn:aws:states:::lambda:invoke', Parameters: { 'FunctionName.$': '$.fn' } })).toBe('Lambda named by $.fn');
    expect(taskTarget({ Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken', Arguments: { FunctionName: '${Function.notify}' } })).toBe('function notify');
    expect(taskTarget({ Resource: '${Function.twilio-reply}' })).toBe('function twilio-reply');
    expect(taskTarget({ Resource: 'arn:aws:lambda:us-east-1:1:function:direct' })).toBe('Lambda direct');
    expect(taskTarget({ Resource: 'arn:aws:states:::sns:publish' })).toBe('SNS publish');
    expect(taskTarget({ Resource: 'arn:aws:states:::dynamodb:putItem' })).toBe('DynamoDB putItem');
    expect(taskTarget({ Resource: 'arn:aws:states:::aws-sdk:s3:getObject' })).toBe('AWS SDK s3:getObject');
    expect(taskTarget({ Resource: 'arn:aws:states:::events:putEvents.waitForTaskToken' })).toBe('EventBridge putEvents');
    expect(taskTarget({ Resource: 'arn:aws:states:us-east-1:1:activity:approve' })).toBe('activity approve');
  });

  it('notify and summarize: the function each calls, and each Retry rule in words', () => {
    const [notify] = flowGraph(flow('notify')).states;
    expect(notify!.calls).toBe('function notify');
    expect(notify!.retries.map((r) => [r.maxAttempts, r.errors.length])).toEqual([[2, 4], [1, 1]]);
    expect(notify!.retries[1]!.words).toBe('retries NotifyFailed up to 1 time, 1 s after the first failure, ×2 each time after');
    expect(flowGraph(flow('summarize')).states[0]!.calls).toBe('function summarize');
  });

  it('the 20-state pipeline: Catch edges with their errors, a loop, the Map\'s and the Parallel\'s branches, notes', () => {
    const graph = flowGraph(read(PIPELINE_FILE));
    expect(graph.states).toHaveLength(20);
    expect(graph.problems).toEqual([]);
    expect(graph.edges.filter((e) => e.kind === 'catch')).toEqual([
      { from: 'Validate order', to: 'Reject order', kind: 'catch', label: 'catch InvalidOrder', errors: ['InvalidOrder'] },
      { from: 'Reserve stock', to: 'Release stock', kind: 'catch', label: 'catch States.ALL', errors: ['States.ALL'] },
      { from: 'Charge and notify', to: 'Release stock', kind: 'catch', label: 'catch PaymentDeclined', errors: ['PaymentDeclined'] },
      { from: 'Charge and notify', to: 'Alert operations', kind: 'catch', label: 'catch States.ALL', errors: ['States.ALL'] },
    ]);
    const state = (name: string) => graph.states.find((s) => s.name === name)!;
    expect(graph.edges).toContainEqual({ from: 'Reviewed?', to: 'Wait for review', kind: 'choice', label: '$.review.Item is absent' });
    expect(state('Wait for review').notes).toEqual(['waits 60 s']);
    expect(state('Reserve stock').notes).toEqual(['for each item of $.order.lines', 'at most 5 at once']);
    expect(state('Reserve stock').branches.map((b) => [b.label, b.graph.states.map((s) => s.name)])).toEqual([['Each item', ['Reserve line', 'Line reserved']]]);
    expect(state('Reserve stock').branches[0]!.graph.states[0]!.calls).toBe('Lambda inventory');
    expect(state('Charge and notify').branches.map((b) => [b.label, b.graph.states[0]!.calls])).toEqual([['Branch 1', 'HTTP invoke'], ['Branch 2', 'SNS publish']]);
    expect(state('Schedule delivery').notes).toEqual(['times out after 30 s']);
    expect(state('Reject order').notes).toEqual(['fails with OrderRejected']);
    // Valid Amazon States Language, as the stack checks a flow before it deploys one.
    expect(() => checkFlowDefinition(PIPELINE_FILE, readFileSync(PIPELINE_FILE, 'utf8'))).not.toThrow();
  });

  it('a Map with the older Iterator, and a transition to no state, which is named and left out', () => {
    const graph = flowGraph({
      StartAt: 'Each',
      States: {
        Each: { Type: 'Map', Iterator: { StartAt: 'Step', States: { Step: { Type: 'Pass', End: true } } }, Next: 'Gone' },
      },
    });
    expect(graph.states[0]!.branches[0]!.graph.states.map((s) => s.name)).toEqual(['Step']);
    expect(graph.edges).toEqual([]);
    expect(graph.problems).toEqual(['Each goes to "Gone", which is not a state']);
  });

  it('never throws on what is not a definition', () => {
    for (const junk of [null, [], 'x', 5, {}, { States: 5 }, { StartAt: 'A', States: { A: null, B: [] } }]) {
      expect(() => flowGraph(junk), JSON.stringify(junk)).not.toThrow();
    }
    expect(flowGraph({ StartAt: 'Nope', States: {} }).problems).toEqual(['StartAt names "Nope", which is not a state']);
  });

  it('lists states from StartAt along the transitions, then those nothing reaches', () => {
    const graph = flowGraph({ StartAt: 'B', States: { Lonely: { Type: 'Succeed' }, C: { Type: 'Succeed' }, B: { Type: 'Pass', Next: 'C' } } });
    expect(graph.states.map((s) => s.name)).toEqual(['B', 'C', 'Lonely']);
  });
});

describe('the text alternative: every state and transition in words', () => {
  it('route-by-type, state by state', () => {
    expect(flowOutline(flowGraph(flow('route-by-type')))).toEqual([
      { text: 'Starts at ByType.', branches: [] },
      { text: 'ByType, a Choice. If $.trigger.type is present and $.trigger.type matches "payment_intent.*", go to Payment. If $.trigger.type is present and $.trigger.type matches "customer.*", go to Customer. Otherwise, go to Other.', branches: [] },
      { text: 'Payment, a Pass. Then the flow ends.', branches: [] },
      { text: 'Customer, a Pass. Then the flow ends.', branches: [] },
      { text: 'Other, a Pass. Then the flow ends.', branches: [] },
    ]);
  });

  it('what a Task calls, its retries, where its errors go, and a Parallel\'s branches in nested lists', () => {
    const outline = flowOutline(flowGraph(read(PIPELINE_FILE)));
    const item = (name: string) => outline.find((i) => i.text.startsWith(`${name}, `))!;
    expect(item('Validate order').text).toBe(
      'Validate order, a Task that calls function validate. It retries Lambda.ServiceException or Lambda.TooManyRequestsException up to 2 times, 1 s after the first failure, ×2 each time after. ' +
      'If it fails with InvalidOrder, go to Reject order. Then go to By order type.');
    const parallel = item('Charge and notify');
    expect(parallel.branches.map((b) => [b.label, b.items.map((i) => i.text)])).toEqual([
      ['Branch 1', ['Starts at Charge card.', 'Charge card, a Task that calls HTTP invoke. Then the branch ends.']],
      ['Branch 2', ['Starts at Notify customer.', 'Notify customer, a Task that calls SNS publish. Then the branch ends.']],
    ]);
    expect(outline).toHaveLength(21);
  });
});

/** A 20-box graph with long edges, a loop, several edges between one pair, labels and a self-loop. */
function syntheticGraph(): { nodes: LayoutNode[]; edges: LayoutEdge[] } {
  const nodes = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}`, width: 90 + (i % 4) * 30, height: 40 + (i % 3) * 16 }));
  const pairs: [number, number, string?][] = [
    [0, 1], [1, 2, 'a == 1'], [1, 3, 'a == 2'], [1, 4, 'otherwise'], [2, 5], [3, 5], [4, 6], [5, 7], [6, 7, 'catch States.ALL'], [7, 8],
    [8, 9], [9, 10, '$.x is present and $.y matches "z*"'], [9, 11], [10, 12], [11, 12], [12, 13], [13, 7, 'again'], [13, 14], [14, 15], [15, 16],
    [16, 17], [17, 18], [18, 19], [2, 19, 'catch Timeout'], [0, 19, 'catch States.ALL'], [14, 14, 'retry itself'], [3, 5, 'second way'],
  ];
  return { nodes, edges: pairs.map(([from, to, label], i) => ({ id: `e${i}`, from: `n${from}`, to: `n${to}`, ...(label && { label: { width: label.length * 7, height: 20 } }) })) };
}

function expectTidy(layout: Layout, nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]) {
  const boxes = nodes.map((n) => layout.nodes[n.id]!);
  for (const [i, node] of nodes.entries()) expect([boxes[i]!.width, boxes[i]!.height], node.id).toEqual([node.width, node.height]);
  const labels = edges.filter((e) => e.label).map((e) => layout.edges[e.id]!.label!);
  const all = [...boxes, ...labels];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) expect(overlap(all[i]!, all[j]!), `${JSON.stringify(all[i])} and ${JSON.stringify(all[j])}`).toBe(false);
    expect(all[i]!.x).toBeGreaterThanOrEqual(0);
    expect(all[i]!.y).toBeGreaterThanOrEqual(0);
    expect(all[i]!.x + all[i]!.width).toBeLessThanOrEqual(layout.width);
    expect(all[i]!.y + all[i]!.height).toBeLessThanOrEqual(layout.height);
  }
  for (const edge of edges) {
    const route = layout.edges[edge.id];
    expect(route, edge.id).toBeDefined();
    if (edge.from === edge.to) continue;
    const [first, last] = [route!.points[0]!, route!.points.at(-1)!];
    expect(onBorder(first, layout.nodes[edge.from]!), `${edge.id} leaves ${edge.from}`).toBe(true);
    expect(onBorder(last, layout.nodes[edge.to]!), `${edge.id} reaches ${edge.to}`).toBe(true);
    for (let k = 0; k + 1 < route!.points.length; k++) {
      for (const node of nodes) expect(inside(route!.points[k]!, route!.points[k + 1]!, layout.nodes[node.id]!), `${edge.id} crosses ${node.id}`).toBe(false);
    }
  }
}

describe('the layered layout', () => {
  it('a 20-box graph: every box and edge placed, no box or label over another, no edge through a box', () => {
    const { nodes, edges } = syntheticGraph();
    const layout = layeredLayout(nodes, edges);
    expect(Object.keys(layout.nodes).sort()).toEqual(nodes.map((n) => n.id).sort());
    expect(Object.keys(layout.edges).sort()).toEqual(edges.map((e) => e.id).sort());
    expectTidy(layout, nodes, edges);
  });

  it('draws a flow top to bottom, and an edge that goes back up as an arrow pointing up', () => {
    const { nodes, edges } = syntheticGraph();
    const layout = layeredLayout(nodes, edges);
    const y = (id: string) => layout.nodes[id]!.y;
    // Every edge but the one closing the loop n7 … n13 points down.
    for (const edge of edges.filter((e) => e.from !== e.to && e.id !== 'e16')) expect(y(edge.to), edge.id).toBeGreaterThan(y(edge.from));
    expect(y('n13')).toBeGreaterThan(y('n7'));
    // e16 goes from n13 back to n7, which is above it: it leaves n13's top and reaches n7's bottom.
    const back = layout.edges.e16!.points;
    expect(back[0]!.y).toBe(layout.nodes.n13!.y);
    expect(back.at(-1)!.y).toBe(layout.nodes.n7!.y + layout.nodes.n7!.height);
  });

  it('is the same every time for the same graph', () => {
    const { nodes, edges } = syntheticGraph();
    expect(layeredLayout(nodes, edges)).toEqual(layeredLayout(nodes, edges));
  });

  it('a chain stays one straight column', () => {
    const nodes = ['a', 'b', 'c'].map((id) => ({ id, width: 100, height: 30 }));
    const layout = layeredLayout(nodes, [{ id: 'ab', from: 'a', to: 'b' }, { id: 'bc', from: 'b', to: 'c' }]);
    expect(new Set(nodes.map((n) => layout.nodes[n.id]!.x)).size).toBe(1);
    for (const id of ['ab', 'bc']) expect(new Set(layout.edges[id]!.points.map((p) => p.x)).size).toBe(1);
  });

  it('placeInOrder(targets, weights, gaps) keeps the order and the gaps, and is exact when nothing is in the way', () => {
    expect(placeInOrder([0, 100, 300], [1, 1, 1], [50, 50])).toEqual([0, 100, 300]);
    expect(placeInOrder([10, 10], [1, 1], [40])).toEqual([-10, 30]);
    expect(placeInOrder([10, 10], [3, 1], [40])).toEqual([0, 40]);
    const xs = placeInOrder([50, 0, 20, 0], [1, 2, 1, 1], [10, 20, 30]);
    for (let i = 0; i + 1 < xs.length; i++) expect(xs[i + 1]! - xs[i]!).toBeGreaterThanOrEqual([10, 20, 30][i]! - 1e-9);
  });
});

describe('the flow picture', () => {
  const states = (scene: Scene) => scene.boxes.filter((b) => b.kind === 'state' || b.kind === 'group');
  const text = (box: SceneBox) => box.lines.map((l) => l.text).join(' ');

  it('route-by-type: Start, every state with its type and name, End, and each Choice rule\'s condition on its arrow', () => {
    const scene = flowScene(flowGraph(flow('route-by-type')));
    expect(scene.boxes.map((b) => [b.kind, text(b)])).toEqual([
      ['terminal', 'Start'], ['state', 'Choice ByType'], ['state', 'Pass Payment'], ['state', 'Pass Customer'], ['state', 'Pass Other'], ['terminal', 'End'],
    ]);
    const labelled = scene.edges.filter((e) => e.label);
    expect(labelled.map((e) => [e.kind, e.label!.title])).toEqual([
      ['choice', '$.trigger.type is present and $.trigger.type matches "payment_intent.*"'],
      ['choice', '$.trigger.type is present and $.trigger.type matches "customer.*"'],
      ['default', 'otherwise'],
    ]);
    // Wrapped to fit, and nothing of the condition lost.
    expect(labelled[0]!.label!.lines.map((l) => l.text).join(' ')).toBe(labelled[0]!.label!.title);
    expect(scene.edges.map((e) => e.kind).sort()).toEqual(['choice', 'choice', 'default', 'end', 'end', 'end', 'start']);
  });

  it('a Task box says what it calls and how it retries; its tooltip says all of it', () => {
    const [box] = states(flowScene(flowGraph(flow('notify'))));
    expect(box!.lines.map((l) => l.text)).toEqual(['Task', 'Notify', 'calls function notify', expect.stringMatching(/^↻ 2× Lambda\.ServiceException, (Lambda\.\w+, )*\+[1-3]$/), '↻ 1× NotifyFailed']);
    expect(box!.title).toContain('retries Lambda.ServiceException, Lambda.AWSLambdaException, Lambda.SdkClientException or Lambda.TooManyRequestsException up to 2 times');
  });

  it('the 20-state pipeline: every state drawn once, nested ones inside their Map or Parallel, nothing overlapping', () => {
    const graph = flowGraph(read(PIPELINE_FILE));
    const scene = flowScene(graph);
    const drawn = states(scene);
    expect(drawn.map((b) => b.key).sort()).toEqual([
      ...graph.states.map((s) => s.name),
      'Charge and notify / Branch 1 / Charge card', 'Charge and notify / Branch 2 / Notify customer',
      'Reserve stock / Each item / Line reserved', 'Reserve stock / Each item / Reserve line',
    ].sort());
    const labels = scene.edges.flatMap((e) => (e.label ? [e.label] : []));
    const solid = [...scene.boxes.filter((b) => b.kind !== 'branch'), ...labels];
    for (let i = 0; i < solid.length; i++) {
      for (let j = i + 1; j < solid.length; j++) {
        const [a, b] = [solid[i]!, solid[j]!];
        // Boxes either stand apart or one holds the other (a Map holds its states).
        const nested = 'kind' in a && 'kind' in b && (contains(a, b) || contains(b, a));
        expect(!overlap(a, b) || nested, `${'key' in a ? a.key : a.title} and ${'key' in b ? b.key : b.title}`).toBe(true);
      }
    }
    for (const box of drawn.filter((b) => b.key.includes(' / '))) {
      const group = scene.boxes.find((b) => b.key === box.key.split(' / ')[0])!;
      expect(contains(group, box), box.key).toBe(true);
    }
    // Every transition of the flow, its branches' and Start's and End's, drawn once.
    const transitions = (g: FlowGraph): number => g.edges.length + g.states.reduce((sum, s) => sum + s.branches.reduce((n, b) => n + transitions(b.graph), 0), 0);
    expect(scene.edges).toHaveLength(transitions(graph) + 1 + graph.states.filter((s) => s.end).length);
    for (const box of scene.boxes) for (const line of box.lines) expect(estimateWidth(line.text, line.font), line.text).toBeLessThanOrEqual(box.width);
  });

  it('wrapText(text, width, …) breaks at spaces, inside a word too long for a line, and ends what does not fit in "…"', () => {
    const measure = (t: string) => t.length * 10;
    expect(wrapText('aa bb cc', 50, 'label', measure, 3)).toEqual(['aa bb', 'cc']);
    expect(wrapText('abcdefghij', 40, 'label', measure, 3)).toEqual(['abcd', 'efgh', 'ij']);
    expect(wrapText('aa bb cc dd', 50, 'label', measure, 1)).toEqual(['aa b…']);
  });
});
