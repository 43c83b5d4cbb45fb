import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { percentile } from './timing.js';

export interface LoadResult {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Count of responses per HTTP status. */
  statuses: Record<number, number>;
  /** One response body, for a sanity check of what the server answered. */
  sampleBody: string;
  /** CPU this process (the load generator) used, as a share of one core over the run. */
  clientCpuShare: number;
}

/** One POST of the load: its headers and body. */
export interface LoadRequest {
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * A bounded, closed-loop load: `total` POSTs to `url`, the i-th of them `requests(i)` (made before
 * the clock starts, so the generator's signing is not timed), at most `concurrency` in flight, each
 * connection kept alive and reused. Plain `node:http` rather than `fetch`, whose per-request cost
 * would make the generator, not the server, the limit against a fast server.
 */
export async function runLoad(url: string, options: { total: number; concurrency: number; requests: (index: number) => LoadRequest }): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const target = new URL(url);
  const prepared = Array.from({ length: options.total }, (_, index) => {
    const { headers, body } = options.requests(index);
    return { headers: { ...headers, 'content-length': String(body.length) }, body };
  });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let sampleBody = '';
  let next = 0;

  const send = ({ headers, body }: LoadRequest) =>
    new Promise<{ status: number; text: string }>((done, fail) => {
      const req = request({ agent, method: 'POST', hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', fail);
      });
      req.on('error', fail);
      req.end(body);
    });

  const worker = async () => {
    while (next < options.total) {
      const index = next++;
      const started = performance.now();
      const { status, text } = await send(prepared[index]!);
      latencies.push(performance.now() - started);
      statuses[status] = (statuses[status] ?? 0) + 1;
      sampleBody ||= text;
    }
  };

  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const spent = process.cpuUsage(cpu);
  agent.destroy();
  return {
    requests: options.total,
    seconds,
    requestsPerSecond: options.total / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    statuses,
    sampleBody,
    clientCpuShare: (spent.user + spent.system) / 1e6 / seconds,
  };
}
