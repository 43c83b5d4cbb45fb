import { fork } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { isMetricLine } from './metrics-off-stdout.js';

/**
 * Bench children: a server or engine set run in its own Node.js process, so the parent can tell
 * its own CPU time apart from the child's and each gets a core of its own. The child announces
 * itself with `ready` and what the parent needs (URLs, environment); it then answers `cpu` with
 * its CPU time so far and `stop` by shutting down.
 */
interface Ready<Info> {
  type: 'ready';
  info: Info;
}
interface Reply {
  id: number;
  value: number;
}
type Request = { id: number; type: 'cpu' | 'stop' };

export interface BenchChild<Info> {
  info: Info;
  pid: number;
  /** User + system CPU microseconds the child has used so far. */
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts `bench/support/<file>` (or the file at an absolute path) under tsx and waits for it to be ready. */
export async function startChild<Info>(file: string, env: Record<string, string> = {}): Promise<BenchChild<Info>> {
  const child = fork(resolve(import.meta.dirname, file), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  // The child writes its metric lines to stdout, as Lambda's functions do (the receiver's
  // handler: 1,700 lines a run); they are dropped here, so its CPU time still includes writing them
  // and the bench's output stays readable. Every other line is passed on.
  createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line) => {
    if (!isMetricLine(line)) process.stdout.write(`${line}\n`);
  });
  const pending = new Map<number, (value: number) => void>();
  let nextId = 0;
  const info = await new Promise<Info>((done, fail) => {
    child.once('exit', (code) => fail(new Error(`${file} exited with ${code} before it was ready`)));
    child.on('message', (message: Ready<Info> | Reply) => {
      if ('type' in message && message.type === 'ready') done(message.info);
      else if ('id' in message) pending.get(message.id)?.(message.value);
    });
  });
  child.removeAllListeners('exit');
  const request = (type: Request['type']) =>
    new Promise<number>((done) => {
      const id = nextId++;
      pending.set(id, (value) => {
        pending.delete(id);
        done(value);
      });
      child.send({ id, type } satisfies Request);
    });
  return {
    info,
    pid: child.pid!,
    cpuUs: () => request('cpu'),
    async stop() {
      const exited = new Promise((done) => child.once('exit', done));
      await request('stop');
      await exited;
    },
  };
}

/** The child's side: announce `info`, answer the parent, and run `stop` before exiting. */
export function serveParent(info: unknown, stop: () => Promise<void>): void {
  const send = (message: unknown) => process.send!(message);
  process.on('message', async (message: Request) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ id: message.id, value: user + system } satisfies Reply);
    } else if (message.type === 'stop') {
      await stop();
      send({ id: message.id, value: 0 } satisfies Reply);
      process.disconnect();
      process.exit(0);
    }
  });
  // An orphan would keep its ports and engines; go when the parent goes.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', info } satisfies Ready<unknown>);
}
