import { describe, expect, it } from 'vitest';
import { MAX_REPLY_HEADERS, replyFromFlowOutput, summarizeReply } from '../../functions/domain/webhooks/flow-reply.js';

describe('replyFromFlowOutput', () => {
  it('answers as JSON any output that is not a proxy response: no statusCode, another key, not an object', () => {
    for (const output of [null, 'text', 7, [1], { body: 'x' }, { statusCode: 200, body: 'x', extra: 1 }]) {
      expect(replyFromFlowOutput(output), JSON.stringify(output)).toEqual({ kind: 'json' });
    }
  });

  it('takes a proxy response with its defaults: no headers, an empty body, not base64', () => {
    expect(replyFromFlowOutput({ statusCode: 200 })).toEqual({ kind: 'shaped', reply: { status: 200, headers: {}, body: '', isBase64Encoded: false } });
  });

  it('lower-cases header names', () => {
    const reply = replyFromFlowOutput({ statusCode: 200, headers: { 'Content-Type': 'text/xml' }, body: '<a/>' });
    expect(reply).toMatchObject({ kind: 'shaped', reply: { headers: { 'content-type': 'text/xml' } } });
  });

  it.each([
    ['a fractional status', { statusCode: 200.5 }],
    ['a status under 200', { statusCode: 199 }],
    ['a status given as text', { statusCode: '200' }],
    ['headers as a list', { statusCode: 200, headers: [['a', 'b']] }],
    [`more than ${MAX_REPLY_HEADERS} headers`, { statusCode: 200, headers: Object.fromEntries(Array.from({ length: MAX_REPLY_HEADERS + 1 }, (_, i) => [`x-h${i}`, 'v'])) }],
    ['a header name with a space', { statusCode: 200, headers: { 'x a': 'v' } }],
    ['a header value that is a number', { statusCode: 200, headers: { 'x-a': 1 } }],
    ['Content-Length', { statusCode: 200, headers: { 'Content-Length': '3' }, body: 'abc' }],
    ['a 204 with a body', { statusCode: 204, body: 'x' }],
    ['isBase64Encoded as text', { statusCode: 200, body: 'YQ==', isBase64Encoded: 'true' }],
  ])('calls %s malformed, with a reason', (_, output) => {
    const reply = replyFromFlowOutput(output);
    expect(reply.kind).toBe('malformed');
    expect((reply as { reason: string }).reason).toMatch(/^the flow's reply /);
  });

  it('summarizes what was sent: the decoded size of a base64 body', () => {
    const reply = replyFromFlowOutput({ statusCode: 200, headers: { 'content-type': 'image/png' }, body: Buffer.alloc(10, 1).toString('base64'), isBase64Encoded: true });
    expect(reply.kind === 'shaped' && summarizeReply(reply.reply)).toEqual({ status: 200, content_type: 'image/png', bytes: 10 });
  });
});
