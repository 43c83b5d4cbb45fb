import { createHmac } from 'node:crypto';
import { sign as signGithub, verify as verifyGithub } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { customRow, hmacParamsFromCustomConfig, senderRow } from '../../../functions/domain/webhooks/senders/catalog.js';
import type { HmacParams } from '../../../functions/domain/webhooks/senders/catalog-types.js';
import type { CustomSignatureConfig } from '../../../functions/domain/webhooks/signatures/custom.js';
import { signCustom } from '../../support/signers.js';
import { contextOf, JSON_BODY, NOW, proveHmacSender, verifySent } from '../../support/sender-proof.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';

/*
 * `custom`: the user describes the sender as HMAC parameters. Proven with configurations of
 * three kinds: GitHub's scheme written out by hand (signed by GitHub's own library), a configuration
 * of the first custom kind converted as stored triggers will be, and a sender with the method,
 * a header and a JSON field in its content.
 */
const GITHUB_BY_HAND: HmacParams = {
  algorithm: 'sha256',
  key: { format: 'text' },
  content: [{ part: 'body' }],
  signature: { from: 'header', name: 'x-hub-signature-256', prefix: 'sha256=' },
  encoding: 'hex',
};

proveHmacSender('custom', {
  row: customRow(GITHUB_BY_HAND),
  secret: 'custom-secret-one',
  otherSecret: 'custom-secret-two',
  sign: async (secret) => ({ body: JSON_BODY, headers: { 'X-Hub-Signature-256': await signGithub(secret, JSON_BODY) } }),
  official: (sent, secret) => verifyGithub(secret, sent.body.toString(), sent.headers['X-Hub-Signature-256']!),
});

const TIMED: CustomSignatureConfig = { algorithm: 'sha512', header: 'X-Acme-Signature', encoding: 'base64', timestamp_header: 'X-Acme-Timestamp' };

proveHmacSender('custom', {
  row: customRow(hmacParamsFromCustomConfig(TIMED)),
  secret: 'custom-secret-one',
  otherSecret: 'custom-secret-two',
  sign: (secret, now) => ({ body: JSON_BODY, headers: signCustom(TIMED, secret, JSON_BODY, now) }),
});

// An imagined sender: base64 HMAC-SHA256 of `METHOD\nX-Delivery\ndata.id\nbody`, key hex, `t=…;s=…` header.
const ASSEMBLED: HmacParams = {
  algorithm: 'sha256',
  key: { format: 'hex' },
  content: [
    { part: 'method' },
    { part: 'literal', text: '\n' },
    { part: 'header', name: 'x-delivery' },
    { part: 'literal', text: '\n' },
    { part: 'json', path: ['data', 'object', 'id'] },
    { part: 'literal', text: '\n' },
    { part: 'timestamp' },
    { part: 'literal', text: '\n' },
    { part: 'body' },
  ],
  signature: { from: 'header', name: 'x-acme-signature', list: { separator: ';', assign: '=', key: 's' } },
  encoding: 'base64',
  timestamp: { source: { from: 'signature_list', key: 't' }, format: 'unix_seconds', tolerance_seconds: 120 },
};

proveHmacSender('custom', {
  row: customRow(ASSEMBLED),
  secret: 'a1'.repeat(32),
  otherSecret: 'b2'.repeat(32),
  sign: (secret, now) => {
    const signature = createHmac('sha256', Buffer.from(secret, 'hex')).update(`POST\ndlv_1\ncus_1\n${now}\n${JSON_BODY}`).digest('base64');
    return { body: JSON_BODY, method: 'POST', headers: { 'X-Delivery': 'dlv_1', 'X-Acme-Signature': `t=${now};s=${signature}` } };
  },
});

describe('custom rows', () => {
  it("the catalog's custom row verifies nothing until a trigger's settings configure it", async () => {
    const sent = { body: JSON_BODY, headers: { 'x-hub-signature-256': await signGithub('s', JSON_BODY) } };
    expect(await verifySender(senderRow('custom')!, contextOf(sent, ['s']))).toBe(false);
  });

  it('verifySender(custom) returns false when the configured method differs from the request', async () => {
    const signature = createHmac('sha256', Buffer.from('a1'.repeat(32), 'hex')).update(`POST\ndlv_1\ncus_1\n${NOW}\n${JSON_BODY}`).digest('base64');
    const sent = { body: JSON_BODY, method: 'PUT', headers: { 'x-delivery': 'dlv_1', 'x-acme-signature': `t=${NOW};s=${signature}` } };
    expect(await verifySent(customRow(ASSEMBLED), sent, ['a1'.repeat(32)])).toBe(false);
  });

  it('verifySender rejects with TypeError for an empty secret, a misconfiguration rather than a bad request', async () => {
    await expect(verifySent(customRow(GITHUB_BY_HAND), { body: JSON_BODY, headers: {} }, [''])).rejects.toThrow(TypeError);
    await expect(verifySent(customRow(GITHUB_BY_HAND), { body: JSON_BODY, headers: {} }, [])).rejects.toThrow(TypeError);
  });
});
