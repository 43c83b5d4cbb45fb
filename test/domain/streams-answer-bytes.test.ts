import { describe, expect, it } from 'vitest';
import { ANSWER_MESSAGE_OVERHEAD_BYTES, MAX_ANSWER_BYTES, MAX_MSG_SIZE_BYTES } from '../../functions/domain/streams/limits.js';
import type { StoredMessage } from '../../functions/domain/streams/types.js';
import { answerBytes } from '../../functions/domain/streams/validation.js';

const message = (data: unknown, headers: Record<string, string> | null = null): StoredMessage =>
  ({ seq: 1, ts: 0, size: 0, data: JSON.stringify(data), headers, msgId: null });

describe('answerBytes(message): what a message takes of an answer, as Lambda carries it', () => {
  it('counts the data\'s JSON text, escaped once more inside Lambda\'s response, and the overhead of its fields', () => {
    expect(answerBytes(message('x'.repeat(1000)))).toBe(1002 + 2 + ANSWER_MESSAGE_OVERHEAD_BYTES);
    // "\"" in the data's JSON text becomes \\\" in the response: quotes count twice.
    expect(answerBytes(message(['"', '"']))).toBe(Buffer.byteLength(JSON.stringify(JSON.stringify(['"', '"']))) - 2 + ANSWER_MESSAGE_OVERHEAD_BYTES);
    expect(answerBytes(message('é'))).toBe(Buffer.byteLength('\\"é\\"') + ANSWER_MESSAGE_OVERHEAD_BYTES);
  });

  it('counts the headers as their JSON text escaped once more', () => {
    const headers = { 'x-kind': 'a "quoted" value' };
    expect(answerBytes(message(1, headers)) - answerBytes(message(1))).toBe(Buffer.byteLength(JSON.stringify(JSON.stringify(headers))) - 2);
  });

  it('the largest message, however escaped, fits an answer alone', () => {
    // The worst escape: a control character is 6 bytes of JSON text (\u0001), 7 inside the response.
    const data = '\u0001'.repeat(Math.floor((MAX_MSG_SIZE_BYTES - 2) / 6));
    expect(JSON.stringify(data).length).toBeLessThanOrEqual(MAX_MSG_SIZE_BYTES);
    expect(answerBytes(message(data))).toBeLessThan(MAX_ANSWER_BYTES / 2);
  });
});
