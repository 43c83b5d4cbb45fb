/**
 * A layered ("Sugiyama") layout of a directed graph, top to bottom, for the flow pictures. Pure:
 * boxes of given sizes in, positions and edge routes out.
 *
 * 1. Cycles are broken by reversing the edges a depth-first search finds going back (a loop of
 *    a flow is drawn with its arrow pointing up).
 * 2. Ranks by longest path: every edge at least two ranks long, so that the rank between a state
 *    and the next holds the edges' labels (and the bends of longer edges) as boxes of their own:
 *    a label can then no more overlap a state, or another label, than two states can.
 * 3. Order within each rank by barycentre sweeps, keeping the order with the fewest crossings.
 * 4. x by isotonic regression: each box as near the mean of its neighbours as the boxes beside it
 *    allow (pool adjacent violators, exact for this order and spacing), long edges held straight.
 * 5. Edges leave the bottom of a box and enter the top of the next, at ports spread along the side
 *    in the order of where they go, and pass through their labels and bends: no edge crosses a box.
 */

export interface Point {
  x: number;
  y: number;
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LayoutNode {
  id: string;
  width: number;
  height: number;
}

export interface LayoutEdge {
  id: string;
  from: string;
  to: string;
  /** The size of the edge's label, placed on the edge between its ends. */
  label?: { width: number; height: number };
}

export interface LayoutOptions {
  /** Space between boxes side by side. */
  nodeGap: number;
  /** Space between parallel edges. */
  edgeGap: number;
  /** Space between a rank of boxes and the labels below it (and between those and the next rank). */
  rankGap: number;
  /** Space around the whole drawing. */
  margin: number;
}

export interface RoutedEdge {
  /**
   * From the edge's `from` to its `to`, whose border the last point is on. Two points one above
   * the other are a straight segment; two points apart sideways lie between two ranks, where a
   * curve leaving and arriving vertically (a cubic with both control points at mid-height) meets
   * no box.
   */
  points: Point[];
  label?: Rect;
}

export interface Layout {
  width: number;
  height: number;
  nodes: Record<string, Rect>;
  edges: Record<string, RoutedEdge>;
}

export const DEFAULT_LAYOUT_OPTIONS: LayoutOptions = { nodeGap: 28, edgeGap: 14, rankGap: 44, margin: 12 };

/** How far a self-loop reaches out of the right side of its box. */
const LOOP_REACH = 20;
const CROSSING_SWEEPS = 24;
const POSITION_SWEEPS = 12;

interface Vertex {
  key: string;
  /** The real node's id; undefined for a label or bend of an edge. */
  node?: string;
  width: number;
  height: number;
  /** Extra width on the right: a self-loop and its label. */
  loop: number;
  isLabel: boolean;
  rank: number;
  x: number;
}

/** One edge as drawn in ranks, top to bottom: its vertices from the upper end to the lower. */
interface Chain {
  edge: LayoutEdge;
  vertices: Vertex[];
  reversed: boolean;
}

/** The order of `ids` a depth-first search visits them in, and the edges it found going back. */
function breakCycles(ids: readonly string[], out: Map<string, LayoutEdge[]>): { order: string[]; back: Set<string> } {
  const state = new Map<string, 'open' | 'done'>();
  const order: string[] = [];
  const back = new Set<string>();
  for (const root of ids) {
    if (state.has(root)) continue;
    state.set(root, 'open');
    order.push(root);
    const stack: { id: string; next: number }[] = [{ id: root, next: 0 }];
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      const edges = out.get(top.id) ?? [];
      if (top.next >= edges.length) {
        state.set(top.id, 'done');
        stack.pop();
        continue;
      }
      const edge = edges[top.next++]!;
      const seen = state.get(edge.to);
      if (seen === 'open') back.add(edge.id);
      else if (seen === undefined) {
        state.set(edge.to, 'open');
        order.push(edge.to);
        stack.push({ id: edge.to, next: 0 });
      }
    }
  }
  return { order, back };
}

/** Crossings between the segments of two adjacent ranks, given each vertex's position in its rank. */
function crossings(segments: readonly [Vertex, Vertex][], position: Map<Vertex, number>): number {
  let count = 0;
  for (let i = 0; i < segments.length; i++) {
    const [a1, a2] = segments[i]!;
    for (let j = i + 1; j < segments.length; j++) {
      const [b1, b2] = segments[j]!;
      if ((position.get(a1)! - position.get(b1)!) * (position.get(a2)! - position.get(b2)!) < 0) count++;
    }
  }
  return count;
}

/**
 * Positions `targets` (each with a weight) as closely as possible, in the least-squares sense,
 * keeping their order with at least `gaps[i]` between the i-th and the next (pool adjacent violators).
 */
export function placeInOrder(targets: readonly number[], weights: readonly number[], gaps: readonly number[]): number[] {
  const offsets = [0];
  for (let i = 1; i < targets.length; i++) offsets.push(offsets[i - 1]! + gaps[i - 1]!);
  const blocks: { value: number; weight: number; size: number }[] = [];
  targets.forEach((target, i) => {
    blocks.push({ value: target - offsets[i]!, weight: weights[i]!, size: 1 });
    while (blocks.length > 1 && blocks.at(-2)!.value > blocks.at(-1)!.value) {
      const b = blocks.pop()!;
      const a = blocks.pop()!;
      const weight = a.weight + b.weight;
      blocks.push({ value: (a.value * a.weight + b.value * b.weight) / weight, weight, size: a.size + b.size });
    }
  });
  const placed: number[] = [];
  for (const block of blocks) for (let k = 0; k < block.size; k++) placed.push(block.value + offsets[placed.length]!);
  return placed;
}

export function layeredLayout(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], options: LayoutOptions = DEFAULT_LAYOUT_OPTIONS): Layout {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const known = edges.filter((edge) => byId.has(edge.from) && byId.has(edge.to));
  const loops = known.filter((edge) => edge.from === edge.to);
  const links = known.filter((edge) => edge.from !== edge.to);
  const out = new Map<string, LayoutEdge[]>();
  for (const edge of links) out.set(edge.from, [...(out.get(edge.from) ?? []), edge]);

  // 1. Cycles.
  const { order, back } = breakCycles(nodes.map((node) => node.id), out);
  const upper = (edge: LayoutEdge) => (back.has(edge.id) ? edge.to : edge.from);
  const lower = (edge: LayoutEdge) => (back.has(edge.id) ? edge.from : edge.to);

  // 2. Ranks: longest path, in a topological order of the acyclic graph.
  const vertices = new Map<string, Vertex>();
  for (const node of nodes) {
    const loopLabels = loops.filter((edge) => edge.from === node.id).map((edge) => edge.label?.width ?? 0);
    const loop = loopLabels.length > 0 ? LOOP_REACH + options.edgeGap + Math.max(...loopLabels) : 0;
    vertices.set(node.id, { key: node.id, node: node.id, width: node.width, height: node.height, loop, isLabel: false, rank: 0, x: 0 });
  }
  const incoming = new Map(nodes.map((node) => [node.id, 0]));
  for (const edge of links) incoming.set(lower(edge), incoming.get(lower(edge))! + 1);
  const ready = order.filter((id) => incoming.get(id) === 0);
  for (let i = 0; i < ready.length; i++) {
    const id = ready[i]!;
    for (const edge of links.filter((e) => upper(e) === id)) {
      const below = vertices.get(lower(edge))!;
      below.rank = Math.max(below.rank, vertices.get(id)!.rank + 2);
      incoming.set(below.key, incoming.get(below.key)! - 1);
      if (incoming.get(below.key) === 0) ready.push(below.key);
    }
  }

  // Each edge as a chain through the ranks between its ends: its label first, then bends.
  const chains: Chain[] = links.map((edge) => {
    const top = vertices.get(upper(edge))!;
    const bottom = vertices.get(lower(edge))!;
    const between: Vertex[] = [];
    for (let rank = top.rank + 1; rank < bottom.rank; rank++) {
      const label = rank === top.rank + 1 ? edge.label : undefined;
      between.push({ key: `${edge.id}#${rank}`, width: label?.width ?? 0, height: label?.height ?? 0, loop: 0, isLabel: label !== undefined, rank, x: 0 });
    }
    return { edge, vertices: [top, ...between, bottom], reversed: back.has(edge.id) };
  });

  // Initial order: real boxes in search order, each followed by the edges leaving it.
  const rankCount = Math.max(0, ...[...vertices.values()].map((v) => v.rank)) + 1;
  const ranks: Vertex[][] = Array.from({ length: rankCount }, () => []);
  const placed = new Set<Vertex>();
  const place = (vertex: Vertex) => {
    if (placed.has(vertex)) return;
    placed.add(vertex);
    ranks[vertex.rank]!.push(vertex);
  };
  for (const id of order) {
    place(vertices.get(id)!);
    for (const chain of chains.filter((c) => c.vertices[0]!.key === id)) chain.vertices.slice(1, -1).forEach(place);
  }
  for (const chain of chains) chain.vertices.forEach(place);

  const segments: [Vertex, Vertex][][] = Array.from({ length: Math.max(0, rankCount - 1) }, () => []);
  for (const chain of chains) {
    for (let i = 0; i + 1 < chain.vertices.length; i++) segments[chain.vertices[i]!.rank]!.push([chain.vertices[i]!, chain.vertices[i + 1]!]);
  }
  const above = new Map<Vertex, Vertex[]>();
  const below = new Map<Vertex, Vertex[]>();
  for (const list of segments) {
    for (const [a, b] of list) {
      below.set(a, [...(below.get(a) ?? []), b]);
      above.set(b, [...(above.get(b) ?? []), a]);
    }
  }

  // 3. Order: barycentre sweeps down and up; the best order seen wins.
  const positions = () => new Map(ranks.flatMap((rank) => rank.map((vertex, index) => [vertex, index] as const)));
  const totalCrossings = () => {
    const position = positions();
    return segments.reduce((sum, list) => sum + crossings(list, position), 0);
  };
  let best = { count: totalCrossings(), ranks: ranks.map((rank) => [...rank]) };
  for (let sweep = 0; sweep < CROSSING_SWEEPS && best.count > 0; sweep++) {
    const down = sweep % 2 === 0;
    const sequence = down ? ranks.keys() : [...ranks.keys()].reverse();
    for (const r of sequence) {
      const position = positions();
      const neighbours = down ? above : below;
      const key = new Map(ranks[r]!.map((vertex, index) => {
        const near = neighbours.get(vertex) ?? [];
        return [vertex, near.length > 0 ? near.reduce((sum, v) => sum + position.get(v)!, 0) / near.length : index] as const;
      }));
      ranks[r]!.sort((a, b) => key.get(a)! - key.get(b)!);
    }
    const count = totalCrossings();
    if (count < best.count) best = { count, ranks: ranks.map((rank) => [...rank]) };
  }
  best.ranks.forEach((rank, r) => (ranks[r] = rank));

  // 4. x: centres, each rank packed, then pulled towards its neighbours.
  const halfGap = (v: Vertex) => (v.node !== undefined || v.isLabel ? options.nodeGap : options.edgeGap) / 2;
  const gap = (a: Vertex, b: Vertex) => (a.width + a.loop + b.width + b.loop) / 2 + halfGap(a) + halfGap(b);
  // A box's centre sits left of its vertex's centre by half its loop's reach.
  for (const rank of ranks) rank.forEach((v, i) => (v.x = i === 0 ? 0 : rank[i - 1]!.x + gap(rank[i - 1]!, v)));
  const weight = (a: Vertex, b: Vertex) => (a.node === undefined && b.node === undefined ? 8 : a.node === undefined || b.node === undefined ? 2 : 1);
  for (let sweep = 0; sweep < POSITION_SWEEPS; sweep++) {
    const phase = sweep % 3; // down, up, both
    const sequence = phase === 1 ? [...ranks.keys()].reverse() : [...ranks.keys()];
    for (const r of sequence) {
      const rank = ranks[r]!;
      const targets: number[] = [];
      const weights: number[] = [];
      for (const vertex of rank) {
        const near = [...(phase !== 1 ? above.get(vertex) ?? [] : []), ...(phase !== 0 ? below.get(vertex) ?? [] : [])];
        const total = near.reduce((sum, v) => sum + weight(vertex, v), 0);
        targets.push(total > 0 ? near.reduce((sum, v) => sum + v.x * weight(vertex, v), 0) / total : vertex.x);
        weights.push(total > 0 ? total : 0.5);
      }
      const xs = placeInOrder(targets, weights, rank.slice(1).map((v, i) => gap(rank[i]!, v)));
      rank.forEach((vertex, i) => (vertex.x = xs[i]!));
    }
  }
  // A long edge's bends in one column where their ranks have room: otherwise the sweeps leave it
  // with small jogs between ranks.
  const index = new Map(ranks.flatMap((rank) => rank.map((vertex, i) => [vertex, i] as const)));
  const fits = (vertex: Vertex, x: number) => {
    const rank = ranks[vertex.rank]!;
    const i = index.get(vertex)!;
    const before = rank[i - 1];
    const after = rank[i + 1];
    return (!before || x - before.x >= gap(before, vertex) - 1e-6) && (!after || after.x - x >= gap(vertex, after) - 1e-6);
  };
  for (const chain of chains) {
    const bends = chain.vertices.slice(1, -1);
    if (bends.length < 2) continue;
    const xs = bends.map((v) => v.x).sort((a, b) => a - b);
    const column = [xs[Math.floor(xs.length / 2)]!, bends[0]!.x, bends.at(-1)!.x].find((x) => bends.every((v) => fits(v, x)));
    if (column !== undefined) {
      for (const vertex of bends) vertex.x = column;
      continue;
    }
    // No one column has room: straighten what can be, from each end.
    for (let i = 1; i < bends.length; i++) if (fits(bends[i]!, bends[i - 1]!.x)) bends[i]!.x = bends[i - 1]!.x;
    for (let i = bends.length - 2; i >= 0; i--) if (fits(bends[i]!, bends[i + 1]!.x)) bends[i]!.x = bends[i + 1]!.x;
  }
  const left = Math.min(...[...placed].map((v) => v.x - (v.width + v.loop) / 2));
  for (const vertex of placed) vertex.x += options.margin - (Number.isFinite(left) ? left : 0);

  // y: each rank as tall as its tallest box; a rank of bends only takes no height.
  const rankTop: number[] = [];
  const rankHeight = ranks.map((rank) => Math.max(0, ...rank.map((v) => v.height)));
  let y = options.margin;
  ranks.forEach((_, r) => {
    if (r > 0) y += options.rankGap / 2;
    rankTop.push(y);
    y += rankHeight[r]!;
  });
  const boxOf = (v: Vertex): Rect => ({
    x: v.x - (v.width + v.loop) / 2,
    y: rankTop[v.rank]! + (rankHeight[v.rank]! - v.height) / 2,
    width: v.width,
    height: v.height,
  });
  const layoutNodes: Record<string, Rect> = {};
  for (const node of nodes) layoutNodes[node.id] = boxOf(vertices.get(node.id)!);

  // 5. Routes: ports along the bottom (out) and top (in) of each box, in the order of the other ends.
  const ports = new Map<string, number>();
  const spread = (box: Rect, list: { key: string; toward: number }[]) => {
    list.sort((a, b) => a.toward - b.toward).forEach((item, i) => ports.set(item.key, box.x + (box.width * (i + 1)) / (list.length + 1)));
  };
  for (const vertex of vertices.values()) {
    const box = layoutNodes[vertex.node!]!;
    spread(box, chains.filter((c) => c.vertices[0] === vertex).map((c) => ({ key: `out:${c.edge.id}`, toward: c.vertices[1]!.x })));
    spread(box, chains.filter((c) => c.vertices.at(-1) === vertex).map((c) => ({ key: `in:${c.edge.id}`, toward: c.vertices.at(-2)!.x })));
  }
  const routed: Record<string, RoutedEdge> = {};
  for (const chain of chains) {
    const first = layoutNodes[chain.vertices[0]!.node!]!;
    const last = layoutNodes[chain.vertices.at(-1)!.node!]!;
    const top = chain.vertices[0]!.rank;
    const bottom = chain.vertices.at(-1)!.rank;
    const start = { x: ports.get(`out:${chain.edge.id}`)!, y: first.y + first.height };
    const end = { x: ports.get(`in:${chain.edge.id}`)!, y: last.y };
    // Straight down out of its box to the bottom of its rank, through each rank between (beside
    // that rank's boxes, through its label), and into the next box from the top of that box's rank:
    // only between ranks does an edge move sideways.
    const points: Point[] = [start, { x: start.x, y: rankTop[top]! + rankHeight[top]! }];
    let label: Rect | undefined;
    for (const vertex of chain.vertices.slice(1, -1)) {
      if (vertex.isLabel) label = boxOf(vertex);
      points.push({ x: vertex.x, y: rankTop[vertex.rank]! }, { x: vertex.x, y: rankTop[vertex.rank]! + rankHeight[vertex.rank]! });
    }
    points.push({ x: end.x, y: rankTop[bottom]! }, end);
    const distinct = points.filter((p, i) => i === 0 || p.x !== points[i - 1]!.x || p.y !== points[i - 1]!.y);
    routed[chain.edge.id] = { points: chain.reversed ? distinct.reverse() : distinct, ...(label && { label }) };
  }
  for (const edge of loops) {
    const box = layoutNodes[edge.from]!;
    const right = box.x + box.width;
    const middle = box.y + box.height / 2;
    const size = edge.label ?? { width: 0, height: 0 };
    routed[edge.id] = {
      points: [{ x: right, y: middle - 6 }, { x: right + LOOP_REACH, y: middle - 6 }, { x: right + LOOP_REACH, y: middle + 6 }, { x: right, y: middle + 6 }],
      ...(edge.label && { label: { x: right + LOOP_REACH + options.edgeGap / 2, y: middle - size.height / 2, width: size.width, height: size.height } }),
    };
  }

  const right = Math.max(0, ...[...placed].map((v) => v.x + (v.width + v.loop) / 2));
  return { width: right + options.margin, height: y + options.margin, nodes: layoutNodes, edges: routed };
}
