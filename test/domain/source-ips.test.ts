import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isSourceIpAllowed, isSourceIpEntry } from '../../functions/domain/webhooks/source-ips.js';
import { apiGatewaySourceIp, toApiGatewayEvent } from '../../local/api-gateway.js';

describe('isSourceIpAllowed', () => {
  it.each([
    [['127.0.0.0/8'], '127.0.0.1', true],
    [['127.0.0.0/8'], '127.255.255.254', true],
    [['127.0.0.0/8'], '128.0.0.1', false],
    [['10.0.0.0/8'], '127.0.0.1', false],
    [['10.0.0.0/8'], '10.1.2.3', true],
    [['10.1.2.3/8'], '10.200.0.1', true], // host bits of a range are ignored
    [['203.0.113.7'], '203.0.113.7', true],
    [['203.0.113.7'], '203.0.113.8', false],
    [['0.0.0.0/0'], '198.51.100.1', true],
    [['0.0.0.0/0'], '2001:db8::1', false], // an IPv4 range holds no IPv6 address
    [['::/0'], '2001:db8::1', true],
    [['2001:db8::/32'], '2001:db8:ffff::1', true],
    [['2001:db8::/32'], '2001:db9::1', false],
    [['2001:db8::1'], '2001:0db8:0000:0000:0000:0000:0000:0001', true], // written out in full
    [['2001:DB8::/32'], '2001:db8::1', true],
    [['192.0.2.0/24', '2001:db8::/32', '198.51.100.7'], '198.51.100.7', true],
    [['192.0.2.0/24', '2001:db8::/32', '198.51.100.7'], '2001:db8::9', true],
    [['192.0.2.0/24', '2001:db8::/32', '198.51.100.7'], '198.51.100.8', false],
  ])('%j lets in %s: %s', (entries, address, allowed) => {
    expect(isSourceIpAllowed(entries, address)).toBe(allowed);
  });

  it('an IPv4 client written as IPv4-mapped IPv6 (as a dual-stack socket reports it) matches IPv4 ranges', () => {
    expect(isSourceIpAllowed(['127.0.0.0/8'], '::ffff:127.0.0.1')).toBe(true);
    expect(isSourceIpAllowed(['10.0.0.0/8'], '::ffff:127.0.0.1')).toBe(false);
  });

  it.each([undefined, '', 'localhost', '10.0.0.1, 127.0.0.1', '127.0.0.1:443', '::ffff:999.0.0.1'])(
    'lets nothing in from a missing or malformed address (%j)',
    (address) => {
      expect(isSourceIpAllowed(['0.0.0.0/0', '::/0'], address)).toBe(false);
    },
  );

  it('gives the same answer for the same list object, which it matches with once built', () => {
    const entries = ['10.0.0.0/8'];
    expect(isSourceIpAllowed(entries, '10.0.0.1')).toBe(true);
    expect(isSourceIpAllowed(entries, '11.0.0.1')).toBe(false);
    expect(isSourceIpAllowed(entries, '10.9.9.9')).toBe(true);
  });
});

describe('isSourceIpEntry', () => {
  it.each(['1.2.3.4', '1.2.3.4/0', '1.2.3.4/32', '::', '::/0', '::1', 'fe80::/10', '2001:db8::/128'])('accepts %s', (entry) => {
    expect(isSourceIpEntry(entry)).toBe(true);
  });

  it.each(['1.2.3.4/33', '::/129', '1.2.3.4/', '/8', '1.2.3', 'fe80::1%1', '1.2.3.4 ', 'a', 'gggg::1'])('refuses %s', (entry) => {
    expect(isSourceIpEntry(entry)).toBe(false);
  });
});

describe('the local stack\'s sourceIp, as API Gateway gives it', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::FFFF:10.1.2.3', '10.1.2.3'],
    ['::1', '::1'],
    ['2001:db8::7', '2001:db8::7'],
    [undefined, '127.0.0.1'],
  ])('the socket\'s %j is %s', (remote, expected) => {
    expect(apiGatewaySourceIp(remote)).toBe(expected);
  });

  it('comes from the socket; a client\'s X-Forwarded-For is kept as a header and changes nothing', () => {
    const req = {
      url: '/webhooks/x',
      method: 'POST',
      httpVersion: '1.1',
      headersDistinct: { host: ['127.0.0.1:3000'], 'x-forwarded-for': ['10.1.2.3'] },
      socket: { remoteAddress: '::ffff:127.0.0.1', localPort: 3000 },
    } as unknown as IncomingMessage;
    const event = toApiGatewayEvent(req, Buffer.alloc(0), { routeKey: 'ANY /webhooks/{webhook_id}' }, '/webhooks/x');
    expect(event.requestContext.http.sourceIp).toBe('127.0.0.1');
    expect(event.headers['x-forwarded-for']).toBe('10.1.2.3, 127.0.0.1');
  });
});
