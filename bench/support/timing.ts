import { performance } from 'node:perf_hooks';

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile, `p` in (0, 100]. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** One side of a comparison: `op` is one verification, request, etc.; it may return a promise. */
export interface Subject {
  name: string;
  op: () => unknown;
}

export interface Comparison {
  /** Operations per second, one sample per round, for `a` and `b`. */
  a: number[];
  b: number[];
  /** `a / b` within each round: paired, so drift of the machine between rounds cancels. */
  ratios: number[];
  /** Operations per batch, as calibrated. */
  iterations: { a: number; b: number };
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

type Loop = (op: () => unknown, iterations: number) => unknown;

/**
 * A timing loop of its own for one operation. Were the loop shared, its call site would see every
 * operation of the run and turn polymorphic, and whichever side ran first would get the better
 * optimised code; a loop compiled per subject keeps each call site to a single operation.
 * Synchronous operations run in a plain loop: awaiting each would add a microtask per call, a
 * cost that belongs only to operations whose API is asynchronous.
 */
function compileLoop(async: boolean): Loop {
  const body = async
    ? 'return (async () => { let last; for (let i = 0; i < iterations; i++) last = await op(); return last; })();'
    : 'let last; for (let i = 0; i < iterations; i++) last = op(); return last;';
  return new Function('op', 'iterations', body) as Loop;
}

async function timeBatch(loop: Loop, op: () => unknown, iterations: number): Promise<number> {
  const started = performance.now();
  const last = await loop(op, iterations);
  const elapsed = performance.now() - started;
  if (last === false) throw new Error('the operation under test returned false: its input is not valid');
  return elapsed;
}

/** Iterations that take about `batchMs`, found by doubling. */
async function calibrate(loop: Loop, op: () => unknown, batchMs: number): Promise<number> {
  let iterations = 1;
  for (;;) {
    const elapsed = await timeBatch(loop, op, iterations);
    if (elapsed >= batchMs / 4 || iterations >= 1 << 24) return Math.max(1, Math.round((iterations * batchMs) / Math.max(elapsed, 0.001)));
    iterations *= 2;
  }
}

/**
 * Compares the throughput of two operations in alternating batches (a b, b a, a b, …), so that
 * noise on a shared machine hits both sides alike. Each side first runs for `warmupMs` so the JIT
 * has settled; each batch lasts about `batchMs`.
 */
export async function compareThroughput(
  a: Subject,
  b: Subject,
  options: { rounds: number; batchMs: number; warmupMs: number },
): Promise<Comparison> {
  const [firstA, firstB] = [a.op(), b.op()];
  const loops = { a: compileLoop(isThenable(firstA)), b: compileLoop(isThenable(firstB)) };
  await Promise.all([firstA, firstB]);
  const ops = { a: a.op, b: b.op };
  for (const side of ['a', 'b'] as const) {
    const until = performance.now() + options.warmupMs;
    while (performance.now() < until) await timeBatch(loops[side], ops[side], 64);
  }
  const iterations = { a: await calibrate(loops.a, ops.a, options.batchMs), b: await calibrate(loops.b, ops.b, options.batchMs) };
  const result: Comparison = { a: [], b: [], ratios: [], iterations };
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const);
    const opsPerSecond = { a: 0, b: 0 };
    for (const side of order) opsPerSecond[side] = (iterations[side] * 1000) / (await timeBatch(loops[side], ops[side], iterations[side]));
    result.a.push(opsPerSecond.a);
    result.b.push(opsPerSecond.b);
    result.ratios.push(opsPerSecond.a / opsPerSecond.b);
  }
  return result;
}

/** Wall and CPU time (user + system, this process only) spent in `run`, in microseconds. */
export async function measureCpu<T>(run: () => Promise<T>): Promise<{ wallUs: number; cpuUs: number; value: T }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await run();
  const wallUs = (performance.now() - started) * 1000;
  const spent = process.cpuUsage(cpu);
  return { wallUs, cpuUs: spent.user + spent.system, value };
}

export const int = (value: number) => Math.round(value).toLocaleString('en-US');
export const fixed = (value: number, digits = 1) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const times = (ratio: number) => `${ratio >= 10 ? ratio.toFixed(1) : ratio >= 0.1 ? ratio.toFixed(2) : ratio.toFixed(3)}x`;
export const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
