import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { act, define, positiveInt } from '../command.js';
import { usage } from '../errors.js';
import { info, printJson, printTable } from '../output.js';

const readStdin = async (): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export function registerKv(program: Command): void {
  const kv = program.command('kv').description('KV buckets: get, put, delete, list keys, purge');
  kv.addHelpText('after', '\nExamples:\n  $ flowgate kv put settings theme dark\n  $ flowgate kv get settings theme\n  $ flowgate kv ls settings --prefix user/\n');

  define(kv, 'get', 'Print a value (its bytes as they are; --json wraps text)', ['flowgate kv get settings theme', 'flowgate kv get settings theme --json'])
    .argument('<bucket>', 'the bucket')
    .argument('<key>', 'the key (any characters the bucket accepts)')
    .action(act(async (context, bucket: string, key: string) => {
      const value = await context.api().client().kv.get(bucket, key);
      if (context.json) return printJson({ bucket, key, value: Buffer.from(value).toString('utf8') });
      process.stdout.write(value);
    }));

  define(kv, 'put', 'Write a value: the argument, a file (--file) or standard input (-)', [
    'flowgate kv put settings theme dark',
    'flowgate kv put settings config --file config.json --content-type application/json',
    'echo -n 42 | flowgate kv put counters visits - --ttl 3600',
  ])
    .argument('<bucket>', 'the bucket')
    .argument('<key>', 'the key')
    .argument('[value]', 'the value; - reads standard input')
    .option('--file <path>', 'the value is this file\'s bytes')
    .option('--content-type <type>', 'its content type')
    .option('--ttl <seconds>', 'this value expires after so many seconds', positiveInt('--ttl'))
    .action(act(async (context, bucket: string, key: string, value: string | undefined, options: { file?: string; contentType?: string; ttl?: number }) => {
      if ((value === undefined) === (options.file === undefined)) throw usage("give the value as the argument 'value' or as --file (not both)");
      const body = options.file ? readFileSync(options.file) : value === '-' ? await readStdin() : value!;
      const written = await context.api().client().kv.put(bucket, key, body, { ...(options.contentType && { contentType: options.contentType }), ...(options.ttl && { ttlSeconds: options.ttl }) });
      if (context.json) printJson(written);
      else info(`Wrote ${bucket}/${key}`);
    }));

  define(kv, 'delete', 'Delete a value', ['flowgate kv delete settings theme'])
    .argument('<bucket>', 'the bucket')
    .argument('<key>', 'the key')
    .action(act(async (context, bucket: string, key: string) => {
      await context.api().client().kv.delete(bucket, key);
      if (context.json) printJson({ deleted: true, bucket, key });
      else info(`Deleted ${bucket}/${key}`);
    }));

  define(kv, 'ls', 'List buckets, or the keys of a bucket in key order', ['flowgate kv ls', 'flowgate kv ls settings --prefix user/ --json'])
    .argument('[bucket]', 'the bucket (none: list buckets)')
    .option('--prefix <prefix>', 'only keys that start with it')
    .option('--limit <n>', 'at most this many', positiveInt('--limit'))
    .action(act(async (context, bucket: string | undefined, options: { prefix?: string; limit?: number }) => {
      const client = context.api().client();
      if (bucket === undefined) {
        const buckets: { name: string }[] = [];
        for await (const b of client.kv.listBuckets()) buckets.push(b as { name: string });
        if (context.json) return printJson(buckets);
        return printTable(['BUCKET'], buckets.map((b) => [b.name]));
      }
      const keys: string[] = [];
      for await (const key of client.kv.keys(bucket, { ...(options.prefix && { prefix: options.prefix }) })) {
        keys.push(key);
        if (options.limit && keys.length >= options.limit) break;
      }
      if (context.json) return printJson(keys);
      for (const key of keys) process.stdout.write(`${key}\n`);
    }));

  define(kv, 'purge', 'Remove every value of a bucket, keep its configuration', ['flowgate kv purge settings --yes'])
    .argument('<bucket>', 'the bucket')
    .option('--yes', 'do it (required: purging cannot be undone)')
    .action(act(async (context, bucket: string, options: { yes?: boolean }) => {
      if (!options.yes) throw usage('purge removes every value: add --yes to confirm');
      const answer = await context.api().client().kv.purgeBucket(bucket);
      if (context.json) printJson(answer);
      else info(`Purged ${bucket}`);
    }));
}
