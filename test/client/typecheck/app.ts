// A small app written against the client, as an app developer writes one: test/client/package.test.ts
// compiles it with `tsc --strict --noEmit`, and a copy with one field misspelt must not compile.
import { createClient, FlowgateError, type Trigger } from '../../../client/src/index.js';

export async function main(baseUrl: string, token: string): Promise<Trigger> {
  const flowgate = createClient({ baseUrl, token });
  await flowgate.kv.createBucket('settings', { ttl_seconds: 3600 });
  await flowgate.kv.put('settings', 'theme', 'dark');
  const theme: string = await flowgate.kv.getString('settings', 'theme');
  for await (const key of flowgate.kv.keys('settings')) console.log(key.toUpperCase());

  const upload = await flowgate.objects.upload('files', 'a.txt', new TextEncoder().encode(theme), { contentType: 'text/plain', onProgress: ({ loaded, total }) => console.log(loaded / total) });
  console.log(upload.etag, upload.size);

  const published = await flowgate.streams.publish('orders', { data: { id: 1 }, msg_id: 'order-1' });
  console.log(published.seqs[0]);
  for await (const message of flowgate.streams.consumer('orders', 'worker').messages({ stopWhenEmpty: true })) console.log(message.seq, message.data);

  try {
    const trigger = await flowgate.triggers.create({ flow: 'echo', name: 'Orders', response_mode: 'acknowledge', event_filter: ['order.*'] });
    for await (const delivery of flowgate.deliveries.list(trigger.id, { status: 'failed' })) console.log(delivery.execution_id);
    return trigger;
  } catch (error) {
    if (error instanceof FlowgateError && error.error === 'validation_error') console.log(error.status, error.message, error.retryAfter);
    throw error;
  }
}
