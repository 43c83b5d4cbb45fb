/**
 * A flow's page: its picture (states, transitions, Choice conditions, Catch and Retry, Parallel and
 * Map branches), the same in words for screen readers and anyone who would rather read, and the
 * definition itself (`GET /flows/{name}`).
 */
import { api } from '../api.js';
import { alertRegion, el, pageHeading, scrollableText, withProgress } from '../dom.js';
import { flowGraph, flowOutline, type FlowGraph, type OutlineItem } from '../flow-model.js';
import { cssFont, estimateWidth, flowScene, FONTS, type Measure, type Scene, type SceneBox, type SceneLine } from '../flow-scene.js';
import type { Point } from '../flow-layout.js';
import '../flow.css';

export const flowHash = (name: string) => `#/flows/${encodeURIComponent(name)}`;
/** A link to a flow's picture, named by the flow. */
export const flowLink = (name: string) => el('a', { href: flowHash(name) }, name);

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: (Node | string)[]): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

/** Text widths as the browser draws them: a canvas measures with the picture's own fonts. */
function canvasMeasure(): Measure {
  const context = document.createElement('canvas').getContext('2d');
  if (!context) return estimateWidth;
  return (text, font) => {
    context.font = cssFont(FONTS[font]);
    // A hair more, so that a font the SVG falls back to differently still fits.
    return context.measureText(text).width * 1.03 + 1;
  };
}

const textOf = (line: SceneLine) => {
  const font = FONTS[line.font];
  return svg('text', { x: line.x, y: line.y, 'text-anchor': 'middle', 'font-size': font.size, 'font-weight': font.weight, 'font-family': font.family, class: `t-${line.font}` }, line.text);
};

/** Straight where a route runs up or down or sideways, a curve leaving and arriving vertically where it changes column between ranks. */
export function routePath(points: readonly Point[]): string {
  const [first, ...rest] = points;
  if (!first) return '';
  let d = `M${first.x} ${first.y}`;
  let previous = first;
  for (const point of rest) {
    if (point.x === previous.x || point.y === previous.y) d += ` L${point.x} ${point.y}`;
    else {
      const middle = (previous.y + point.y) / 2;
      d += ` C${previous.x} ${middle} ${point.x} ${middle} ${point.x} ${point.y}`;
    }
    previous = point;
  }
  return d;
}

function boxOf(box: SceneBox): SVGElement {
  const className = box.kind === 'state' || box.kind === 'group' ? `${box.kind} box box-${(box.type ?? 'unknown').toLowerCase()}` : box.kind;
  const radius = box.kind === 'terminal' ? box.height / 2 : box.kind === 'branch' ? 4 : 6;
  return svg('g', { class: className },
    svg('title', {}, box.title),
    svg('rect', { x: box.x, y: box.y, width: box.width, height: box.height, rx: radius }),
    ...box.lines.map(textOf));
}

/** Each picture's ids are its own, should two be on one page. */
let pictures = 0;

/** The picture as SVG: a title and a description for screen readers, which the list after it details. */
function pictureOf(id: string, name: string, scene: Scene, description: string): SVGElement {
  const arrow = (marker: string, className: string) => svg('marker', { id: marker, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    svg('path', { d: 'M0 0 L10 5 L0 10 z', class: className }));
  const edges = scene.edges.map((edge) => svg('path', {
    d: routePath(edge.points), class: `edge edge-${edge.kind}`, 'marker-end': `url(#${id}-${edge.kind === 'catch' ? 'catch' : 'arrow'})`,
  }));
  const labels = scene.edges.flatMap((edge) => (edge.label ? [svg('g', { class: `edge-label edge-label-${edge.kind}` },
    svg('title', {}, edge.label.title),
    svg('rect', { x: edge.label.x, y: edge.label.y, width: edge.label.width, height: edge.label.height, rx: 3 }),
    ...edge.label.lines.map(textOf))] : []));
  const behind = scene.boxes.filter((box) => box.kind === 'group' || box.kind === 'branch');
  const front = scene.boxes.filter((box) => box.kind === 'state' || box.kind === 'terminal');
  return svg('svg', { xmlns: SVG, class: 'flow-svg', role: 'img', 'aria-labelledby': `${id}-title ${id}-desc`, width: scene.width, height: scene.height, viewBox: `0 0 ${scene.width} ${scene.height}` },
    svg('title', { id: `${id}-title` }, `The ${name} flow`),
    svg('desc', { id: `${id}-desc` }, description),
    svg('defs', {}, arrow(`${id}-arrow`, 'arrowhead'), arrow(`${id}-catch`, 'arrowhead arrowhead-catch')),
    // Frames first, then the arrows over them, the states, and the labels over the arrows they sit on.
    ...behind.map(boxOf), ...edges, ...front.map(boxOf), ...labels);
}

function outlineList(items: readonly OutlineItem[]): HTMLElement {
  return el('ol', {}, ...items.map((item) => el('li', {}, item.text,
    ...item.branches.map((branch) => el('div', { class: 'flow-branch' }, el('p', {}, `${branch.label}:`), outlineList(branch.items))))));
}

/** A legend, the picture in its scrolling frame, and "States and transitions" (the same in words) under a heading of `level`. */
function flowFigure(name: string, definition: Record<string, unknown>, level: 'h2' | 'h3'): HTMLElement[] {
  const id = `flow-picture-${++pictures}`;
  const graph = flowGraph(definition);
  const scene = flowScene(graph, canvasMeasure());
  const count = (g: FlowGraph): number => g.states.reduce((sum, s) => sum + 1 + s.branches.reduce((n, b) => n + count(b.graph), 0), 0);
  const total = count(graph);
  const description = `${total} ${total === 1 ? 'state' : 'states'}, starting at ${graph.startAt}. The list "States and transitions" after the picture says what it shows.`;
  return [
    el('p', { class: 'hint' }, 'Arrows lead to the next state; a Choice\'s arrows carry their conditions. Dashed red arrows are where errors go (Catch); ↻ marks a Retry: how many times, on which errors. Parallel and Map states hold their branches.'),
    el('div', { class: 'flow-picture', role: 'region', tabindex: '0', 'aria-label': `Picture of the ${name} flow` }, pictureOf(id, name, scene, description)),
    el('section', { 'aria-labelledby': `${id}-outline` }, el(level, { id: `${id}-outline` }, 'States and transitions'), outlineList(flowOutline(graph))),
  ];
}

type FlowAnswer = { name: string; definition: Record<string, unknown> };
const readFlow = (name: string) => api<FlowAnswer>('GET', `/flows/${encodeURIComponent(name)}`);

/**
 * "Show the flow" for a form's flow field: the picture of whichever flow `select` names, read when
 * opened and when the choice changes; in the form rather than a link away, which would lose what
 * was typed.
 */
export function flowPreview(select: HTMLSelectElement): HTMLElement {
  const alert = alertRegion();
  const content = el('div');
  const details = el('details', { class: 'flow-preview' }, el('summary', {}, 'Show the flow'), alert, content);
  let shown = '';
  const load = () => {
    if (!details.open || !select.value || select.value === shown) return;
    const name = (shown = select.value);
    content.replaceChildren();
    void withProgress(content, alert, async () => {
      const { definition } = await readFlow(name);
      if (name === shown) content.replaceChildren(...flowFigure(name, definition, 'h3'));
    }).then(() => {
      // A failed read is tried again the next time.
      if (!content.hasChildNodes() && name === shown) shown = '';
    });
  };
  details.addEventListener('toggle', load);
  select.addEventListener('change', load);
  return details;
}

export function flowPage(name: string): HTMLElement {
  const alert = alertRegion();
  const body = el('div', { 'aria-busy': 'true' }, el('p', {}, 'Loading the flow…'));
  void withProgress(body, alert, async () => {
    const { definition } = await readFlow(name);
    body.replaceChildren(
      ...(typeof definition.Comment === 'string' ? [el('p', {}, definition.Comment)] : []),
      ...flowFigure(name, definition, 'h2'),
      el('details', {}, el('summary', {}, 'Definition (Amazon States Language)'), scrollableText('Flow definition', JSON.stringify(definition, null, 2))));
  }).then(() => {
    if (body.querySelector('.flow-picture') === null) body.replaceChildren();
    body.removeAttribute('aria-busy');
  });
  return el('main', {}, pageHeading(`Flow ${name}`), el('p', {}, el('a', { href: '#/triggers' }, 'All triggers')), alert, body);
}
