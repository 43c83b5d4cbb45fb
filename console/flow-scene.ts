/**
 * A flow's graph (`flow-model.ts`) as a picture to draw: boxes with their lines of text, edges as
 * routes with their labels, all positioned (`flow-layout.ts`). Parallel and Map states are boxes
 * holding their branches, each laid out on its own first. Pure: the width of a text comes from a
 * `Measure` (a canvas in the browser, an estimate in tests), so it runs in Node.
 */
import { layeredLayout, type LayoutEdge, type LayoutNode, type Point, type Rect } from './flow-layout.js';
import type { EdgeKind, FlowGraph, FlowState, RetryRule } from './flow-model.js';

export interface Font {
  size: number;
  weight: number;
  family: string;
}

const SANS = 'system-ui, sans-serif';
const MONO = 'ui-monospace, monospace';

/** The fonts of the picture; the page draws with these and measures with them. */
export const FONTS = {
  type: { size: 11, weight: 400, family: SANS },
  name: { size: 13, weight: 600, family: SANS },
  detail: { size: 11, weight: 400, family: SANS },
  label: { size: 11, weight: 400, family: MONO },
} as const satisfies Record<string, Font>;
export type FontName = keyof typeof FONTS;

/** Line height of each font. */
const LEADING: Record<FontName, number> = { type: 14, name: 17, detail: 15, label: 14 };

/** A CSS font shorthand (canvas `font`). */
export const cssFont = (font: Font) => `${font.weight} ${font.size}px ${font.family}`;

/** The width of `text` drawn in `font`. */
export type Measure = (text: string, font: FontName) => number;

/** A generous estimate of text widths, for tests and for when no canvas is at hand. */
export const estimateWidth: Measure = (text, font) => {
  const { size, weight, family } = FONTS[font];
  return [...text].length * size * (family === MONO ? 0.62 : weight >= 600 ? 0.64 : 0.58);
};

export interface SceneLine {
  text: string;
  font: FontName;
  /** Centre of the line. */
  x: number;
  /** Baseline. */
  y: number;
}

export interface SceneBox extends Rect {
  /** Unique in the scene: the state's path (`Fan / Branch 1 / Step`), or `Start`, `End`. */
  key: string;
  kind: 'state' | 'terminal' | 'group' | 'branch';
  /** The state's type (Task, Choice, …), for its look. */
  type?: string;
  lines: SceneLine[];
  /** Everything about it in words, untruncated. */
  title: string;
}

export interface SceneEdge {
  key: string;
  kind: EdgeKind | 'start' | 'end';
  /** See `RoutedEdge.points`. */
  points: Point[];
  label?: Rect & { lines: SceneLine[]; title: string };
}

export interface Scene {
  width: number;
  height: number;
  /** Outer boxes before the boxes inside them, so that drawing in order leaves nothing hidden. */
  boxes: SceneBox[];
  edges: SceneEdge[];
}

const PAD_X = 12;
const PAD_Y = 8;
/** Widest text in a box: longer lines wrap or end in "…". */
const MAX_TEXT_WIDTH = 220;
const MIN_BOX_WIDTH = 120;
const MAX_LABEL_WIDTH = 190;
const LABEL_PAD = 4;
const BRANCH_GAP = 16;
const TERMINAL_HEIGHT = 26;

/**
 * `text` in lines of at most `maxWidth`, broken at spaces (or anywhere in a word too long for a
 * line), at most `maxLines` of them; the last ends in "…" when something did not fit.
 */
export function wrapText(text: string, maxWidth: number, font: FontName, measure: Measure, maxLines: number): string[] {
  const lines: string[] = [];
  let rest = text.trim();
  while (rest.length > 0 && lines.length < maxLines) {
    if (measure(rest, font) <= maxWidth) {
      lines.push(rest);
      rest = '';
      break;
    }
    const chars = [...rest];
    let fit = 1;
    while (fit < chars.length && measure(chars.slice(0, fit + 1).join(''), font) <= maxWidth) fit++;
    const space = chars.slice(0, fit + 1).join('').lastIndexOf(' ');
    const cut = space > 0 ? space : fit;
    lines.push(chars.slice(0, cut).join('').trimEnd());
    rest = chars.slice(cut).join('').trimStart();
  }
  if (rest.length > 0 && lines.length > 0) {
    let last = lines.pop()!;
    while (last.length > 0 && measure(`${last}…`, font) > maxWidth) last = [...last].slice(0, -1).join('');
    lines.push(`${last.trimEnd()}…`);
  }
  return lines;
}

/** A state's box text: its type, its name, what it calls, its notes and its retries, each line fitted. */
function stateLines(state: FlowState, measure: Measure): [string, FontName][] {
  const fit = (text: string, font: FontName, maxLines = 1) => wrapText(text, MAX_TEXT_WIDTH, font, measure, maxLines).map((line) => [line, font] as [string, FontName]);
  return [
    ...fit(state.type, 'type'),
    ...fit(state.name, 'name', 2),
    ...(state.calls ? fit(`calls ${state.calls}`, 'detail', 2) : []),
    ...state.notes.flatMap((note) => fit(note, 'detail')),
    ...state.retries.map((rule) => [retryLine(rule, measure), 'detail'] as [string, FontName]),
  ];
}

/** `↻ 2× Lambda.ServiceException, +3`: the attempts and as many of the errors as fit, counting the rest. */
function retryLine(rule: RetryRule, measure: Measure): string {
  const head = `↻ ${rule.maxAttempts}×`;
  for (let shown = rule.errors.length; shown > 0; shown--) {
    const line = `${head} ${rule.errors.slice(0, shown).join(', ')}${shown < rule.errors.length ? `, +${rule.errors.length - shown}` : ''}`;
    if (measure(line, 'detail') <= MAX_TEXT_WIDTH) return line;
  }
  return wrapText(`${head} ${rule.errors.join(', ')}`, MAX_TEXT_WIDTH, 'detail', measure, 1)[0] ?? head;
}

/** A state in words, for its tooltip. */
export function stateTitle(state: FlowState): string {
  return [`${state.type} ${state.name}`, state.calls && `calls ${state.calls}`, ...state.notes, ...state.retries.map((rule) => rule.words), state.comment]
    .filter(Boolean).join('; ');
}

const textHeight = (lines: readonly [string, FontName][]) => lines.reduce((sum, [, font]) => sum + LEADING[font], 0);
const textWidth = (lines: readonly [string, FontName][], measure: Measure) => Math.max(0, ...lines.map(([text, font]) => measure(text, font)));

/** Lines centred on `centre`, the first starting at `top`. */
function placeLines(lines: readonly [string, FontName][], centre: number, top: number): SceneLine[] {
  let y = top;
  return lines.map(([text, font]) => {
    y += LEADING[font];
    // The baseline sits about a quarter of the line height above the line's bottom.
    return { text, font, x: centre, y: y - Math.round(LEADING[font] * 0.28) };
  });
}

interface Drawing {
  width: number;
  height: number;
  boxes: SceneBox[];
  edges: SceneEdge[];
}

/** Something the layout places: its size, and how to draw it once placed. */
interface Block {
  width: number;
  height: number;
  draw(at: Point): Pick<Drawing, 'boxes' | 'edges'>;
}

const moved = (drawing: Pick<Drawing, 'boxes' | 'edges'>, by: Point): Pick<Drawing, 'boxes' | 'edges'> => ({
  boxes: drawing.boxes.map((box) => ({ ...box, x: box.x + by.x, y: box.y + by.y, lines: box.lines.map((line) => ({ ...line, x: line.x + by.x, y: line.y + by.y })) })),
  edges: drawing.edges.map((edge) => ({
    ...edge,
    points: edge.points.map((p) => ({ x: p.x + by.x, y: p.y + by.y })),
    ...(edge.label && { label: { ...edge.label, x: edge.label.x + by.x, y: edge.label.y + by.y, lines: edge.label.lines.map((line) => ({ ...line, x: line.x + by.x, y: line.y + by.y })) } }),
  })),
});

function terminalBlock(word: 'Start' | 'End', measure: Measure): Block {
  const width = Math.ceil(measure(word, 'type')) + 32;
  return {
    width,
    height: TERMINAL_HEIGHT,
    draw: (at) => ({
      boxes: [{ key: word, kind: 'terminal', x: at.x, y: at.y, width, height: TERMINAL_HEIGHT, lines: placeLines([[word, 'type']], at.x + width / 2, at.y + (TERMINAL_HEIGHT - LEADING.type) / 2), title: word === 'Start' ? 'Start of the flow' : 'End of the flow' }],
      edges: [],
    }),
  };
}

function stateBlock(state: FlowState, path: string, measure: Measure): Block {
  const key = path ? `${path} / ${state.name}` : state.name;
  const lines = stateLines(state, measure);
  const header = { width: textWidth(lines, measure) + 2 * PAD_X, height: textHeight(lines) + 2 * PAD_Y };
  if (state.branches.length === 0) {
    const width = Math.ceil(Math.max(MIN_BOX_WIDTH, header.width));
    const height = Math.ceil(header.height);
    return {
      width,
      height,
      draw: (at) => ({ boxes: [{ key, kind: 'state', type: state.type, x: at.x, y: at.y, width, height, lines: placeLines(lines, at.x + width / 2, at.y + PAD_Y), title: stateTitle(state) }], edges: [] }),
    };
  }
  // A Parallel or Map: its own lines, then its branches side by side, each in a frame of its own.
  const branches = state.branches.map((branch) => ({ label: branch.label, drawing: drawGraph(branch.graph, `${key} / ${branch.label}`, measure, false) }));
  const labelHeight = LEADING.type + 4;
  const branchesWidth = branches.reduce((sum, b) => sum + b.drawing.width, 0) + BRANCH_GAP * (branches.length - 1);
  const width = Math.ceil(Math.max(MIN_BOX_WIDTH, header.width, branchesWidth + 2 * PAD_X));
  const branchHeight = Math.max(...branches.map((b) => b.drawing.height)) + labelHeight;
  const height = Math.ceil(header.height + branchHeight + PAD_Y);
  return {
    width,
    height,
    draw: (at) => {
      const boxes: SceneBox[] = [{ key, kind: 'group', type: state.type, x: at.x, y: at.y, width, height, lines: placeLines(lines, at.x + width / 2, at.y + PAD_Y), title: stateTitle(state) }];
      const edges: SceneEdge[] = [];
      // Centred when the box is wider than its branches.
      let x = at.x + (width - branchesWidth) / 2;
      const top = at.y + header.height;
      for (const branch of branches) {
        const frame: SceneBox = {
          key: `${key} / ${branch.label}`, kind: 'branch', x, y: top, width: branch.drawing.width, height: branchHeight,
          lines: placeLines([[branch.label, 'type']], x + branch.drawing.width / 2, top + 2), title: `${branch.label} of ${state.name}`,
        };
        const inner = moved(branch.drawing, { x, y: top + labelHeight });
        boxes.push(frame, ...inner.boxes);
        edges.push(...inner.edges);
        x += branch.drawing.width + BRANCH_GAP;
      }
      return { boxes, edges };
    },
  };
}

/** Lays out one graph (the flow, or one branch of a Parallel or Map) at the origin. */
function drawGraph(graph: FlowGraph, path: string, measure: Measure, isFlow: boolean): Drawing {
  const blocks = new Map<string, Block>();
  const id = (name: string) => `state:${name}`;
  const edges: (LayoutEdge & { kind: SceneEdge['kind']; words?: string; lines?: string[] })[] = [];
  const known = new Set(graph.states.map((state) => state.name));
  if (isFlow) blocks.set('start', terminalBlock('Start', measure));
  for (const state of graph.states) blocks.set(id(state.name), stateBlock(state, path, measure));
  if (isFlow && known.has(graph.startAt)) edges.push({ id: 'start', from: 'start', to: id(graph.startAt), kind: 'start' });
  graph.edges.forEach((edge, index) => {
    const lines = edge.label === undefined ? undefined : wrapText(edge.label, MAX_LABEL_WIDTH, 'label', measure, 4);
    edges.push({
      id: `edge:${index}`, from: id(edge.from), to: id(edge.to), kind: edge.kind, words: edge.label, lines,
      ...(lines && { label: { width: Math.ceil(textWidth(lines.map((line) => [line, 'label']), measure) + 2 * LABEL_PAD), height: lines.length * LEADING.label + 2 * LABEL_PAD } }),
    });
  });
  const ending = graph.states.filter((state) => state.end);
  if (isFlow && ending.length > 0) {
    blocks.set('end', terminalBlock('End', measure));
    for (const state of ending) edges.push({ id: `end:${state.name}`, from: id(state.name), to: 'end', kind: 'end' });
  }

  const nodes: LayoutNode[] = [...blocks].map(([key, block]) => ({ id: key, width: block.width, height: block.height }));
  const layout = layeredLayout(nodes, edges);
  const boxes: SceneBox[] = [];
  const sceneEdges: SceneEdge[] = [];
  for (const [key, block] of blocks) {
    const drawn = block.draw(layout.nodes[key]!);
    boxes.push(...drawn.boxes);
    sceneEdges.push(...drawn.edges);
  }
  const own: SceneEdge[] = [];
  for (const edge of edges) {
    const route = layout.edges[edge.id];
    if (!route) continue;
    const label = route.label && edge.lines
      ? { ...route.label, lines: placeLines(edge.lines.map((line) => [line, 'label']), route.label.x + route.label.width / 2, route.label.y + LABEL_PAD), title: edge.words ?? '' }
      : undefined;
    own.push({ key: `${path}:${edge.id}`, kind: edge.kind, points: route.points, ...(label && { label }) });
  }
  return { width: Math.ceil(layout.width), height: Math.ceil(layout.height), boxes, edges: [...own, ...sceneEdges] };
}

/** The picture of a flow: Start, its states, End, and every transition, laid out. */
export function flowScene(graph: FlowGraph, measure: Measure = estimateWidth): Scene {
  return drawGraph(graph, '', measure, true);
}
