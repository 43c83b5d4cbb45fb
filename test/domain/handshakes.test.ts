import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HANDSHAKE_STAGES } from '../../functions/domain/webhooks/handshake-stages.js';
import { answerHandshake, HANDSHAKES, type HandshakeRequest } from '../../functions/domain/webhooks/handshakes.js';

const request = (over: Partial<HandshakeRequest> = {}): HandshakeRequest => ({ method: 'POST', headers: {}, query: {}, json: undefined, rawBody: new Uint8Array(), ...over });

describe('answerHandshake', () => {
  it('slack: a JSON url_verification is answered with its challenge', () => {
    expect(answerHandshake('slack_url_verification', 'signed', request({ json: { type: 'url_verification', challenge: 'abc', token: 't' } }), [])).toEqual({ reply: { status: 200, json: { challenge: 'abc' } } });
  });

  it.each([
    ['a non-string challenge', request({ json: { type: 'url_verification', challenge: 1 } })],
    ['an event_callback', request({ json: { type: 'event_callback', challenge: 'abc' } })],
    ['a form body', request({ form: { type: 'url_verification', challenge: 'abc' } })],
    ['a challenge with a line break', request({ json: { type: 'url_verification', challenge: 'a\nb' } })],
  ])('slack: %s is not a challenge', (_, req) => {
    expect(answerHandshake('slack_url_verification', 'signed', req, [])).toBeUndefined();
  });

  it('zoom: encryptedToken is the hex HMAC-SHA256 of the plain token under the current secret', () => {
    const outcome = answerHandshake('zoom_url_validation', 'signed', request({ json: { event: 'endpoint.url_validation', payload: { plainToken: 'tok' } } }), ['new', 'old']);
    expect(outcome).toEqual({ reply: { status: 200, json: { plainToken: 'tok', encryptedToken: createHmac('sha256', 'new').update('tok').digest('hex') } } });
  });

  // Changed with issue 30: the app secret was the fallback verify token; it never is now.
  it('meta: only the trigger\'s own verify token is answered; without one, even the app secret is refused', () => {
    const req = (token: string, verifyTokenHash?: string) =>
      request({ method: 'GET', query: { 'hub.mode': 'subscribe', 'hub.verify_token': token, 'hub.challenge': '42' }, ...(verifyTokenHash && { verifyTokenHash }) });
    const hash = createHash('sha256').update('my-verify-token').digest('hex');
    expect(answerHandshake('meta_subscribe', 'get', req('my-verify-token', hash), ['app-secret'])).toMatchObject({ reply: { status: 200, text: '42' } });
    expect(answerHandshake('meta_subscribe', 'get', req('app-secret', hash), ['app-secret'])).toEqual({ refused: true });
    expect(answerHandshake('meta_subscribe', 'get', req('app-secret'), ['app-secret'])).toEqual({ refused: true });
  });

  it('a kind is answered only at its own stage', () => {
    expect(answerHandshake('dropbox_challenge', 'signed', request({ method: 'GET', query: { challenge: 'x' } }), [])).toBeUndefined();
    expect(answerHandshake('dropbox_challenge', 'get', request({ method: 'GET', query: { challenge: 'x' } }), [])).toBeDefined();
  });

  it('the stages the receiver reads at init are the answers\' own', () => {
    for (const [kind, handshake] of Object.entries(HANDSHAKES)) expect(HANDSHAKE_STAGES[kind as keyof typeof HANDSHAKES], kind).toBe(handshake.stage);
  });
});
