import { writeFileSync } from 'node:fs';

/**
 * bench/cost.svg: each scenario's dollars per million as one horizontal bar stacked by billed line,
 * the peers' published prices as plain bars on the same scale, and the target as a dashed line.
 * Hand-written SVG, as bench/results.svg: no dependency, readable in a diff.
 */
const LINE_COLOURS: Record<string, string> = {
  'API Gateway requests': '#5c6bc0',
  'Lambda requests': '#ffa726',
  'Lambda duration': '#fb8c00',
  'SQS requests': '#ab47bc',
  'Step Functions requests': '#e91e63',
  'Step Functions duration': '#f48fb1',
  'DynamoDB writes': '#1e88e5',
  'DynamoDB reads': '#90caf9',
  'KMS requests': '#8d6e63',
  'CloudWatch Logs': '#43a047',
};
const WIDTH = 1000;
const LABEL_X = 16;
const BAR_X = 250;
const BAR_WIDTH = 560;
const ROW = 26;
const BAR = 16;

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface CostResult {
  scenario: string;
  items: { line: string; usd_per_million: number }[];
  usd_per_million: number;
}

export function writeCostChart(path: string, results: readonly CostResult[], peers: readonly { name: string; usd_per_million: number; checked: string }[], target: number): void {
  // Svix's $100 would squash every bar of ours: the scale stops at Trigger.dev's price, and a longer bar is cut with its figure printed.
  const scaleMax = Math.max(...results.map((r) => r.usd_per_million), ...peers.filter((p) => p.usd_per_million <= 30).map((p) => p.usd_per_million), target) * 1.05;
  const x = (usd: number) => BAR_X + (Math.min(usd, scaleMax) / scaleMax) * BAR_WIDTH;
  const parts: string[] = [];
  let y = 56;
  for (const result of results) {
    let at = 0;
    parts.push(`<text x="${LABEL_X}" y="${y + BAR - 3}">${escape(result.scenario)}</text>`);
    for (const item of result.items) {
      const width = x(at + item.usd_per_million) - x(at);
      if (width > 0) parts.push(`<rect x="${x(at).toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${BAR}" fill="${LINE_COLOURS[item.line] ?? '#9e9e9e'}"><title>${escape(`${item.line}: $${item.usd_per_million.toFixed(3)} per million`)}</title></rect>`);
      at += item.usd_per_million;
    }
    parts.push(`<text x="${(x(result.usd_per_million) + 6).toFixed(1)}" y="${y + BAR - 3}">$${result.usd_per_million.toFixed(2)}</text>`);
    y += ROW;
  }
  y += 8;
  for (const peer of peers) {
    parts.push(`<text x="${LABEL_X}" y="${y + BAR - 3}">${escape(`${peer.name} (published, ${peer.checked})`)}</text>`);
    parts.push(`<rect x="${BAR_X}" y="${y}" width="${(x(peer.usd_per_million) - BAR_X).toFixed(1)}" height="${BAR}" fill="#bdbdbd"/>`);
    parts.push(`<text x="${(x(peer.usd_per_million) + 6).toFixed(1)}" y="${y + BAR - 3}">$${peer.usd_per_million}${peer.usd_per_million > scaleMax ? ' (bar cut)' : ''}</text>`);
    y += ROW;
  }
  const targetX = x(target).toFixed(1);
  parts.push(`<line x1="${targetX}" y1="44" x2="${targetX}" y2="${y}" stroke="#c62828" stroke-dasharray="4 3"/><text x="${targetX}" y="40" text-anchor="middle" fill="#c62828">target $${target}</text>`);
  // The legend, wrapped into rows as wide as the chart.
  let legendX = LABEL_X;
  let legendY = y + 18;
  for (const [line, colour] of Object.entries(LINE_COLOURS)) {
    const width = 16 + line.length * 7 + 18;
    if (legendX + width > WIDTH - 20) {
      legendX = LABEL_X;
      legendY += 20;
    }
    parts.push(`<rect x="${legendX}" y="${legendY - 10}" width="12" height="12" fill="${colour}"/><text x="${legendX + 16}" y="${legendY}">${escape(line)}</text>`);
    legendX += width;
  }
  const height = legendY + 16;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12" role="img" aria-labelledby="title">
<title id="title">Dollars per million webhooks by billed line, beside the peers' published prices</title>
<rect width="100%" height="100%" fill="#fff"/>
<text x="${LABEL_X}" y="22" font-size="15" font-weight="bold">What a million webhooks cost on Flowgate (us-east-1 list prices, npm run bench cost)</text>
${parts.join('\n')}
</svg>
`;
  writeFileSync(path, svg);
}
