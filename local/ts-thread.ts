import { Worker } from 'node:worker_threads';

/**
 * A worker thread running the TypeScript module `module`: tsx's loader registered on the thread,
 * then the module. A thread does not take `--import` from its parent's flags on Node 20, so it
 * registers tsx itself.
 */
export function startTsThread(module: URL, workerData: unknown): Worker {
  const entry = new URL(`data:text/javascript,${encodeURIComponent(
    `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); await import(${JSON.stringify(module.href)});`,
  )}`);
  return new Worker(entry, { workerData });
}
