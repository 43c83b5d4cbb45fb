import type { Command } from 'commander';
import { act, define, positiveInt } from '../command.js';
import { info, printJson, printJsonLine, printTable, style } from '../output.js';

/** A message's data: JSON when the text parses as JSON, else the text. */
const dataOf = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

export function registerStreams(program: Command): void {
  const streams = program.command('streams').description('Streams: publish, consume through a durable consumer, inspect');
  streams.addHelpText('after', '\nExamples:\n  $ flowgate streams pub orders \'{"id": 1}\'\n  $ flowgate streams sub orders --consumer worker\n  $ flowgate streams info orders\n');

  define(streams, 'pub', 'Publish a message (JSON when it parses, else text)', [
    'flowgate streams pub orders \'{"id": 1, "total": 20}\'',
    'flowgate streams pub orders "plain text" --subject orders.eu --msg-id order-1',
  ])
    .argument('<stream>', 'the stream')
    .argument('<data>', 'the message')
    .option('--subject <subject>', 'its subject')
    .option('--msg-id <id>', 'an id that makes a repeat publish a duplicate')
    .action(act(async (context, stream: string, data: string, options: { subject?: string; msgId?: string }) => {
      const ack = await context.api().client().streams.publish(stream, { data: dataOf(data), ...(options.subject && { subject: options.subject }), ...(options.msgId && { msg_id: options.msgId }) } as never);
      if (context.json) return printJson(ack);
      info(`Published to ${stream}: ${JSON.stringify(ack)}`);
    }));

  define(streams, 'sub', 'Consume through a durable consumer (made if missing), acknowledging each message as it is printed', [
    'flowgate streams sub orders --consumer worker',
    'flowgate streams sub orders --consumer worker --count 10 --json',
  ])
    .argument('<stream>', 'the stream')
    .requiredOption('--consumer <name>', 'the durable consumer (created when it does not exist)')
    .option('--count <n>', 'stop after this many messages', positiveInt('--count'))
    .option('--wait <ms>', 'stop when no message came for this long (default: keep waiting)', positiveInt('--wait'))
    .action(act(async (context, stream: string, options: { consumer: string; count?: number; wait?: number }) => {
      const client = context.api().client();
      try {
        await client.streams.getConsumer(stream, options.consumer);
      } catch (error) {
        if ((error as { status?: number }).status !== 404) throw error;
        await client.streams.createConsumer(stream, options.consumer);
      }
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      let received = 0;
      try {
        for await (const message of client.streams.consumer(stream, options.consumer).messages({ signal: controller.signal, ...(options.wait && { waitMs: Math.min(options.wait, 20_000), stopWhenEmpty: true }) })) {
          const m = message as unknown as { seq: number; subject?: string; data: unknown; published_at?: string };
          if (context.json) printJsonLine({ seq: m.seq, subject: m.subject ?? null, data: m.data, published_at: m.published_at ?? null });
          else process.stdout.write(`${style.dim(`#${m.seq}`)} ${m.subject ? `${m.subject} ` : ''}${typeof m.data === 'string' ? m.data : JSON.stringify(m.data)}\n`);
          received++;
          if (options.count && received >= options.count) {
            await message.ack();
            break;
          }
        }
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      } finally {
        process.removeListener('SIGINT', stop);
        process.removeListener('SIGTERM', stop);
      }
    }));

  define(streams, 'info', "A stream's configuration, counts and consumers", ['flowgate streams info orders', 'flowgate streams info --json'])
    .argument('[stream]', 'the stream (none: list streams)')
    .action(act(async (context, stream: string | undefined) => {
      const client = context.api().client();
      if (stream === undefined) {
        const all: { name: string; messages?: number }[] = [];
        for await (const s of client.streams.list()) all.push(s as { name: string; messages?: number });
        if (context.json) return printJson(all);
        return printTable(['STREAM', 'MESSAGES'], all.map((s) => [s.name, s.messages]));
      }
      const detail = await client.streams.get(stream);
      const consumers: unknown[] = [];
      for await (const c of client.streams.listConsumers(stream)) consumers.push(c);
      if (context.json) return printJson({ ...detail, consumers });
      process.stdout.write(`${JSON.stringify(detail, null, 2)}\n`);
      printTable(['CONSUMER', 'PENDING', 'LAG'], (consumers as { name: string; pending?: number; lag?: number }[]).map((c) => [c.name, c.pending, c.lag]));
    }));

}
