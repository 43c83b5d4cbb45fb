import { describe, expect, it } from 'vitest';
import { FrameSizeWatch } from '../../local/listen-server.js';

/** A client's frame (RFC 6455 section 5.2): masked, as every client frame is; the payload is zeros. */
function frame(length: number, options: { fin?: boolean; opcode?: number } = {}): Buffer {
  const first = ((options.fin ?? true) ? 0x80 : 0) | (options.opcode ?? 0x1);
  const header = length < 126 ? Buffer.from([first, 0x80 | length])
    : length < 65536 ? Buffer.from([first, 0x80 | 126, length >> 8, length & 0xff])
    : Buffer.concat([Buffer.from([first, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(length)); return b; })()]);
  return Buffer.concat([header, Buffer.alloc(4), Buffer.alloc(length)]);
}

/** Feeds `bytes` in chunks of `size`, as a socket may deliver them; the first limit broken, if any. */
function feed(bytes: Buffer, size: number): string | undefined {
  const watch = new FrameSizeWatch();
  for (let at = 0; at < bytes.length; at += size) {
    const broken = watch.feed(bytes.subarray(at, at + size));
    if (broken) return broken;
  }
  return undefined;
}

describe("FrameSizeWatch (API Gateway's WebSocket limits in the local emulator)", () => {
  it('takes frames up to 32 KB and messages up to 128 KB, however the bytes are chunked', () => {
    const message = Buffer.concat([frame(32 * 1024, { fin: false }), frame(32 * 1024, { fin: false, opcode: 0 }), frame(32 * 1024, { fin: false, opcode: 0 }), frame(32 * 1024, { opcode: 0 }), frame(10)]);
    for (const size of [1, 3, 7, 1000, message.length]) expect(feed(message, size), `chunks of ${size}`).toBeUndefined();
  });

  it('says frame for a frame over 32 KB, and message once fragments pass 128 KB', () => {
    expect(feed(frame(32 * 1024 + 1), 5)).toBe('frame');
    expect(feed(frame(70_000), 64)).toBe('frame');
    const tooLong = Buffer.concat([...Array.from({ length: 4 }, (_, i) => frame(32 * 1024, { fin: false, opcode: i === 0 ? 1 : 0 })), frame(1, { opcode: 0 })]);
    expect(feed(tooLong, 4096)).toBe('message');
  });

  it('counts a new message from zero after the last fragment, and lets control frames pass between fragments', () => {
    const twoMessages = Buffer.concat([frame(32 * 1024, { fin: false }), frame(9, { opcode: 0x9 }), frame(32 * 1024, { opcode: 0 }), frame(32 * 1024, { fin: false }), frame(32 * 1024, { opcode: 0 })]);
    expect(feed(twoMessages, 100)).toBeUndefined();
  });
});
