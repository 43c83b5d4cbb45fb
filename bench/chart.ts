import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ChartRow } from './support/chart-row.js';

/**
 * Draws bench/results.json as bench/results.svg: per bench, one group of horizontal bars per unit,
 * each bar a figure against its target (a dashed vertical line), green when met, red when missed,
 * grey where the issue sets no target. Hand-written SVG: no dependency, readable in a diff.
 * `npx tsx bench/chart.ts` redraws it; `npm run bench` calls it after saving the results.
 */
const WIDTH = 1200;
const LABEL_X = 16;
const BAR_X = 230;
const BAR_WIDTH = 520;
const TEXT_X = BAR_X + BAR_WIDTH + 12;
const ROW = 22;
const BAR = 14;
/** The issue's order; benches not listed follow in the order of results.json. */
const ORDER = ['signatures', 'receiver', 'throughput', 'cold-start', 'purge'];
const COLOURS = { met: '#2e7d32', missed: '#c62828', none: '#78909c' };

interface BenchResult {
  measured_at?: string;
  node?: string;
  chart?: ChartRow[];
  [key: string]: unknown;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const round = (value: number) => Math.round(value * 10) / 10;
const format = (value: number) => (value >= 100 || Number.isInteger(value) ? String(Math.round(value * 1000) / 1000) : value >= 1 ? value.toFixed(1) : String(Number(value.toPrecision(2))));

function rowsOf(result: BenchResult): ChartRow[] {
  return Array.isArray(result.chart) ? result.chart : [];
}

function groupBy(rows: ChartRow[], fallback: string): [string, ChartRow[]][] {
  const groups = new Map<string, ChartRow[]>();
  for (const row of rows) {
    const key = row.group ?? fallback;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  return [...groups];
}

interface Axis {
  x(value: number): number;
  ticks: number[];
}

/**
 * A group's horizontal scale. Linear from zero to past the largest figure or target; for `log`
 * groups (ratios), powers of ten around the figures, the target and parity (1x), so that 0.05x
 * and 19x can share a row of bars and parity sits in the same place in every such group.
 */
function axisFor(rows: ChartRow[], targets: number[]): Axis {
  const values = [...rows.map((r) => r.value), ...targets];
  if (rows[0]?.scale === 'log') {
    const positive = [...values, 1].filter((v) => v > 0);
    const low = Math.floor(Math.log10(Math.min(...positive) / 1.5));
    const high = Math.ceil(Math.log10(Math.max(...positive) * 1.5));
    const x = (value: number) => BAR_X + ((Math.log10(Math.max(value, 10 ** low)) - low) / (high - low)) * BAR_WIDTH;
    return { x, ticks: Array.from({ length: high - low + 1 }, (_, i) => 10 ** (low + i)) };
  }
  const max = Math.max(...values) * 1.1 || 1;
  return { x: (value: number) => BAR_X + (Math.max(0, value) / max) * BAR_WIDTH, ticks: [] };
}

/** SVG markup for the given results (`results` of bench/results.json). */
export function renderChart(results: Record<string, BenchResult>): string {
  const parts: string[] = [];
  let y = 24;
  parts.push(`<text x="${LABEL_X}" y="${y}" class="title">Flowgate benchmarks</text>`);
  y += 18;
  parts.push(`<text x="${LABEL_X}" y="${y}" class="note">Each bar is a figure against its own baseline measured in the same run; the dashed line is the target. Green: met, red: missed, grey: no target.</text>`);
  y += 10;

  const rank = (name: string) => (ORDER.includes(name) ? ORDER.indexOf(name) : ORDER.length);
  for (const [name, result] of Object.entries(results).sort(([a], [b]) => rank(a) - rank(b))) {
    const rows = rowsOf(result);
    if (rows.length === 0) continue;
    y += 26;
    const when = result.measured_at ? ` — ${result.measured_at.slice(0, 16).replace('T', ' ')} UTC, node ${result.node ?? '?'}` : '';
    parts.push(`<text x="${LABEL_X}" y="${y}" class="bench">${escape(name)}<tspan class="note">${escape(when)}</tspan></text>`);
    for (const [group, groupRows] of groupBy(rows, name)) {
      y += 20;
      parts.push(`<text x="${LABEL_X}" y="${y}" class="group">${escape(group)}</text>`);
      const targets = groupRows.map((r) => r.target).filter((t): t is number => t !== undefined);
      const axis = axisFor(groupRows, targets);
      y += 14; // room for the target's label
      const top = y + 3;
      for (const row of groupRows) {
        y += ROW;
        const met = row.target === undefined ? undefined : row.better === 'higher' ? row.value >= row.target : row.value <= row.target;
        const colour = met === undefined ? COLOURS.none : met ? COLOURS.met : COLOURS.missed;
        const width = Math.max(2, axis.x(row.value) - BAR_X);
        parts.push(`<text x="${BAR_X - 8}" y="${y}" class="label" text-anchor="end">${escape(row.label)}</text>`);
        parts.push(`<rect x="${BAR_X}" y="${y - BAR + 3}" width="${round(width)}" height="${BAR}" fill="${colour}" rx="2"><title>${escape(`${row.label}: ${row.text}`)}</title></rect>`);
        parts.push(`<text x="${TEXT_X}" y="${y}" class="value">${escape(row.text)}${met === false ? ' — missed' : ''}</text>`);
      }
      for (const tick of axis.ticks) {
        const tx = round(axis.x(tick));
        parts.push(`<line x1="${tx}" y1="${top}" x2="${tx}" y2="${y + 6}" class="tick"/>`);
        parts.push(`<text x="${tx}" y="${y + 17}" class="tick-label" text-anchor="middle">${format(tick)}x</text>`);
      }
      for (const target of new Set(targets)) {
        const tx = round(axis.x(target));
        const better = groupRows.find((r) => r.target === target)?.better === 'higher' ? '≥' : '≤';
        parts.push(`<line x1="${tx}" y1="${top}" x2="${tx}" y2="${y + 6}" class="target"/>`);
        parts.push(`<text x="${tx + 3}" y="${top - 4}" class="target-label">target ${better} ${format(target)}${axis.ticks.length > 0 ? 'x' : ''}</text>`);
      }
      y += axis.ticks.length > 0 ? 20 : 6;
    }
  }
  const height = y + 24;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">`,
    '<style>',
    '  .title { font-size: 18px; font-weight: 600; fill: #212121; }',
    '  .bench { font-size: 15px; font-weight: 600; fill: #212121; }',
    '  .group { font-size: 12px; font-weight: 600; fill: #455a64; }',
    '  .label, .value { font-size: 12px; fill: #212121; }',
    '  .note { font-size: 11px; font-weight: 400; fill: #616161; }',
    '  .target { stroke: #212121; stroke-width: 1.5; stroke-dasharray: 4 3; }',
    '  .target-label { font-size: 10px; fill: #212121; }',
    '  .tick { stroke: #bdbdbd; stroke-width: 1; }',
    '  .tick-label { font-size: 10px; fill: #757575; }',
    '</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/** Reads `resultsPath` (bench/results.json) and writes the chart to `svgPath`. */
export async function writeChart(resultsPath: string, svgPath: string): Promise<void> {
  const { results } = JSON.parse(await readFile(resultsPath, 'utf8')) as { results: Record<string, BenchResult> };
  await writeFile(svgPath, renderChart(results));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = import.meta.dirname;
  await writeChart(resolve(dir, 'results.json'), resolve(dir, 'results.svg'));
  console.log(`wrote ${resolve(dir, 'results.svg')}`);
}
