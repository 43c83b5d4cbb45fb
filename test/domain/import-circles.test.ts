/**
 * The domain reads in one direction: a file's imports never lead back to it. A circle makes a
 * newcomer read several files at once to understand any one of them, and which of them loads first
 * depends on who imported whom. Each room (`kv`, `objects`, `triggers`, the webhooks' senders)
 * has its use cases over its ports; nothing below points back up.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeCircle, importCircles, importGraph } from '../support/import-graph.js';

const FUNCTIONS = resolve(import.meta.dirname, '../../functions');

let scratch: string | undefined;
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('import circles', () => {
  it('no import circle has a file under functions/domain', () => {
    // The whole of functions/: a circle that leaves the domain and comes back is one too.
    const graph = importGraph(FUNCTIONS);
    const circles = importCircles(graph).filter((circle) => circle.some((file) => file.startsWith('domain/')));
    expect(circles.map((circle) => `${circle.length} files:\n${describeCircle(graph, circle)}`)).toEqual([]);
  });

  it('importCircles finds a circle of type imports, a re-export and a dynamic import, and a file importing itself', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'flowgate-import-circles-'));
    await mkdir(join(scratch, 'room'));
    const files: Record<string, string> = {
      'room/service.ts': "import type { Options } from './options.js';\nexport const run = (o: Options) => o;\n",
      'room/options.ts': "export type { Result } from './result.js';\nexport interface Options { a: number }\n",
      'room/result.ts': "export const load = () => import('./service.js');\nexport type Result = number;\n",
      'room/index.ts': "import { run } from '.';\nexport { run };\n",
      'room/leaf.ts': "import { run } from './service.js';\nimport { readFile } from 'node:fs';\nexport { run, readFile };\n",
    };
    for (const [path, text] of Object.entries(files)) await writeFile(join(scratch, path), text);
    const graph = importGraph(scratch);
    expect(importCircles(graph)).toEqual([['room/index.ts'], ['room/options.ts', 'room/result.ts', 'room/service.ts']]);
    expect(describeCircle(graph, ['room/options.ts', 'room/result.ts', 'room/service.ts'])).toBe(
      '  room/options.ts -> room/result.ts\n  room/result.ts -> room/service.ts\n  room/service.ts -> room/options.ts',
    );
  });
});
