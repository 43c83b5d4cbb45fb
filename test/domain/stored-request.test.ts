import { describe, expect, it } from 'vitest';
import { RefusalBudget } from '../../functions/domain/webhooks/refusal-budget.js';
import { REDACTED, replayHeaders, storedBodyBytes, storedRequest } from '../../functions/domain/webhooks/stored-request.js';

const request = (rawBody: Uint8Array, headers: Record<string, string> = {}, query: Record<string, string> = {}) =>
  ({ method: 'POST', headers, query, sourceIp: '198.51.100.7', rawBody });

describe('storedRequest', () => {
  it('replaces the API key, authorization, proxy-authorization and cookie, keeps signature and other headers', () => {
    const stored = storedRequest(request(Buffer.from('{}'), {
      'x-api-key': 'fgk_secret', authorization: 'Bearer t', 'proxy-authorization': 'Basic x', cookie: 'a=b', 'stripe-signature': 't=1,v1=ab', 'x-github-event': 'push',
    }, { api_key: 'fgk_secret', page: '2' }), true);
    expect(stored.headers).toEqual({
      'x-api-key': REDACTED, authorization: REDACTED, 'proxy-authorization': REDACTED, cookie: REDACTED, 'stripe-signature': 't=1,v1=ab', 'x-github-event': 'push',
    });
    expect(stored.query).toEqual({ api_key: REDACTED, page: '2' });
    expect(stored.source_ip).toBe('198.51.100.7');
    expect(JSON.stringify(stored)).not.toContain('fgk_secret');
  });

  it('keeps UTF-8 as text and anything else as base64, both giving back the same bytes', () => {
    for (const bytes of [Buffer.from('naïve ✓'), Buffer.from([0xff, 0x00, 0xc3, 0x28]), Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), Buffer.alloc(0)]) {
      const stored = storedRequest(request(bytes), true);
      expect(Buffer.from(storedBodyBytes(stored)!).equals(bytes)).toBe(true);
      expect(stored.body_bytes).toBe(bytes.length);
    }
    expect(storedRequest(request(Buffer.from([0xff])), true).body_encoding).toBe('base64');
    expect(storedRequest(request(Buffer.from('ok')), true).body_encoding).toBe('utf8');
  });

  it('leaves the body out when told to, recording its size', () => {
    const stored = storedRequest(request(Buffer.alloc(10)), false);
    expect(stored.body).toBeUndefined();
    expect(stored.body_bytes).toBe(10);
    expect(storedBodyBytes(stored)).toBeUndefined();
  });

  it('gives a replayed flow the stored headers less the redacted ones', () => {
    const stored = storedRequest(request(Buffer.from('{}'), { 'x-api-key': 'k', 'content-type': 'application/json' }), true);
    expect(replayHeaders(stored)).toEqual({ 'content-type': 'application/json' });
  });
});

describe('RefusalBudget', () => {
  it('asks the shared counter only within its own budget, and reports every refusal past either', async () => {
    let sharedLeft = 3;
    let sharedCalls = 0;
    let overflow = 0;
    const budget = new RefusalBudget({ countRefusal: async () => (sharedCalls++, sharedLeft-- > 0) }, () => overflow++, 5);
    const minute = 60_000 * 1000;
    const granted = [];
    for (let i = 0; i < 8; i++) granted.push(await budget.take('t', minute + i));
    expect(granted).toEqual([true, true, true, false, false, false, false, false]);
    // Five asked the counter (its own budget), three did not.
    expect(sharedCalls).toBe(5);
    expect(overflow).toBe(5);
    // A new minute starts a new local budget.
    sharedLeft = 1;
    expect(await budget.take('t', minute + 60_000)).toBe(true);
  });
});
