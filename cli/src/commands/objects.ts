import type { Command } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { act, define, positiveInt } from '../command.js';
import { usage } from '../errors.js';
import { info, printJson, printTable } from '../output.js';

/** Bytes fetched per ranged GET on a download: memory stays bounded, and the bar moves. */
const DOWNLOAD_CHUNK_BYTES = 8 * 1024 * 1024;

/** `store:key` (a remote object) or a local path. */
function remote(location: string): { store: string; key: string } | undefined {
  const at = location.indexOf(':');
  if (at <= 0 || location.startsWith('./') || location.startsWith('/')) return undefined;
  return { store: location.slice(0, at), key: location.slice(at + 1) };
}

/** A progress bar on a terminal (stderr), nothing otherwise: a pipe or a log gets the summary line only. */
function progressBar(total: number, label: string) {
  if (!process.stderr.isTTY || total === 0) return { update: (_: number) => undefined, stop: () => undefined };
  const bar = new SingleBar({ format: `${label} [{bar}] {percentage}% {value_mb}/{total_mb} MB {eta_formatted}`, stream: process.stderr, hideCursor: true }, Presets.shades_classic);
  const mb = (n: number) => (n / 1048576).toFixed(1);
  bar.start(total, 0, { value_mb: mb(0), total_mb: mb(total) });
  return { update: (n: number) => bar.update(n, { value_mb: mb(n) }), stop: () => bar.stop() };
}

export function registerObjects(program: Command): void {
  const objects = program.command('objects').description('Object stores: list, copy both ways (multipart, with a progress bar), remove, purge');
  objects.addHelpText('after', '\nExamples:\n  $ flowgate objects cp ./video.mp4 media:videos/intro.mp4\n  $ flowgate objects cp media:videos/intro.mp4 ./intro.mp4\n  $ flowgate objects ls media --prefix videos/\n');

  define(objects, 'ls', 'List stores, or the objects of a store in key order', ['flowgate objects ls', 'flowgate objects ls media --prefix videos/ --json'])
    .argument('[store]', 'the store (none: list stores)')
    .option('--prefix <prefix>', 'only keys that start with it')
    .option('--limit <n>', 'at most this many', positiveInt('--limit'))
    .action(act(async (context, store: string | undefined, options: { prefix?: string; limit?: number }) => {
      const client = context.api().client();
      if (store === undefined) {
        const stores: { name: string }[] = [];
        for await (const s of client.objects.listStores()) stores.push(s as { name: string });
        if (context.json) return printJson(stores);
        return printTable(['STORE'], stores.map((s) => [s.name]));
      }
      const found: { key: string; size: number; last_modified?: string }[] = [];
      for await (const o of client.objects.list(store, { ...(options.prefix && { prefix: options.prefix }) })) {
        found.push(o as { key: string; size: number; last_modified?: string });
        if (options.limit && found.length >= options.limit) break;
      }
      if (context.json) return printJson(found);
      printTable(['SIZE', 'MODIFIED', 'KEY'], found.map((o) => [o.size, o.last_modified, o.key]));
    }));

  define(objects, 'cp', 'Copy a local file to store:key, or store:key to a local file (large files in parallel parts, with a progress bar)', [
    'flowgate objects cp ./report.pdf docs:2026/report.pdf',
    'flowgate objects cp docs:2026/report.pdf ./report.pdf',
    'flowgate objects cp ./big.bin media:big.bin --content-type application/octet-stream --json',
  ])
    .argument('<source>', 'a local path or store:key')
    .argument('<destination>', 'store:key or a local path')
    .option('--content-type <type>', 'upload: the content type')
    .action(act(async (context, source: string, destination: string, options: { contentType?: string }) => {
      const from = remote(source);
      const to = remote(destination);
      if ((from === undefined) === (to === undefined)) throw usage('source: copy between a local path and store:key (one of each)');
      const client = context.api().client();
      const started = performance.now();
      if (to) {
        let size: number;
        try {
          size = statSync(source).size;
        } catch {
          throw usage(`source: no such file: ${source}`);
        }
        const bar = progressBar(size, 'upload');
        const info_ = await client.objects.upload(to.store, to.key, source, { ...(options.contentType && { contentType: options.contentType }), onProgress: (p) => bar.update(p.loaded) });
        bar.stop();
        const ms = Math.round(performance.now() - started);
        if (context.json) return printJson({ source, destination, bytes: size, ms, object: info_ });
        return info(`Copied ${source} to ${destination} (${size} bytes, ${ms} ms)`);
      }
      const head = await client.objects.head(from!.store, from!.key);
      if (!head) throw usage(`source: no object ${source}`);
      const bar = progressBar(head.size, 'download');
      const fd = openSync(destination, 'w');
      try {
        for (let at = 0; at < head.size; at += DOWNLOAD_CHUNK_BYTES) {
          const part = await client.objects.download(from!.store, from!.key, { range: { start: at, end: Math.min(at + DOWNLOAD_CHUNK_BYTES, head.size) - 1 } });
          writeSync(fd, part.body);
          bar.update(at + part.body.length);
        }
      } finally {
        closeSync(fd);
        bar.stop();
      }
      const ms = Math.round(performance.now() - started);
      if (context.json) return printJson({ source, destination, bytes: head.size, ms });
      info(`Copied ${source} to ${destination} (${head.size} bytes, ${ms} ms)`);
    }));

  define(objects, 'rm', 'Delete an object', ['flowgate objects rm media:videos/intro.mp4'])
    .argument('<object>', 'store:key')
    .action(act(async (context, object: string) => {
      const target = remote(object);
      if (!target) throw usage(`object: expected store:key, got ${object}`);
      await context.api().client().objects.delete(target.store, target.key);
      if (context.json) printJson({ deleted: true, ...target });
      else info(`Deleted ${object}`);
    }));

  define(objects, 'purge', 'Remove every object of a store, keep the store', ['flowgate objects purge media --yes'])
    .argument('<store>', 'the store')
    .option('--yes', 'do it (required: purging cannot be undone)')
    .action(act(async (context, store: string, options: { yes?: boolean }) => {
      if (!options.yes) throw usage('purge removes every object: add --yes to confirm');
      const answer = await context.api().client().objects.purgeStore(store);
      if (context.json) printJson(answer);
      else info(`Purged ${store}`);
    }));
}
