import { describe, expect, it } from 'vitest';
import { SENDERS } from '../../functions/domain/webhooks/senders/catalog.js';
import { redactJsonPaths, secretLocations, withheldFromFlow } from '../../functions/domain/webhooks/secret-fields.js';
import { storedRequest } from '../../functions/domain/webhooks/stored-request.js';

const request = (over: { headers?: Record<string, string>; query?: Record<string, string>; body?: string }) => ({
  method: 'POST', headers: over.headers ?? {}, query: over.query ?? {}, rawBody: Buffer.from(over.body ?? ''),
});

describe('secret fields', () => {
  it('every row that takes a static token from a fixed header names that header a secret field', () => {
    for (const row of SENDERS) {
      const v = row.verification;
      if (v.primitive === 'static_token' && v.location === 'header') expect(row.secret_fields, row.id).toContainEqual({ from: 'header', name: v.header });
      if (v.primitive === 'static_token' && v.location === 'named_header') expect(row.secret_fields, row.id).toContainEqual({ from: 'header_named_by_secret' });
      if (row.secret_from_handshake) expect(row.secret_fields?.length, row.id).toBeGreaterThan(0);
    }
  });

  it('redactJsonPaths replaces a member in every element under *, leaves other members, and reports no change when absent', () => {
    const value = { value: [{ clientState: 'a', id: 1 }, { clientState: 'b' }, 'x'], other: 'kept' };
    expect(redactJsonPaths(value, [['value', '*', 'clientState']], 'R')).toEqual({
      value: { value: [{ clientState: 'R', id: 1 }, { clientState: 'R' }, 'x'], other: 'kept' }, changed: true,
    });
    expect(value.value[0]).toEqual({ clientState: 'a', id: 1 });
    expect(redactJsonPaths({ value: 'not an array' }, [['value', '*', 'clientState']], 'R')).toEqual({ value: { value: 'not an array' }, changed: false });
  });

  it('a header a pasted "Name: value" secret names is secret, case-insensitively', () => {
    const locations = secretLocations([{ from: 'header_named_by_secret' }], ['X-Okta-Hook-Auth: s3cret']);
    expect(storedRequest(request({ headers: { 'x-okta-hook-auth': 's3cret', 'x-other': 'kept' } }), true, locations).headers).toEqual({ 'x-okta-hook-auth': '[redacted]', 'x-other': 'kept' });
  });

  it('a stored JSON body has its secret member redacted; a flow sees neither secret headers nor authorization', () => {
    const locations = secretLocations([{ from: 'json', path: ['verification_token'] }, { from: 'header', name: 'x-gitlab-token' }], []);
    const stored = storedRequest(request({ body: '{"verification_token":"tok","a":1}' }), true, locations);
    expect(JSON.parse(stored.body!)).toEqual({ verification_token: '[redacted]', a: 1 });
    const visible = withheldFromFlow({ authorization: 'Bearer x', 'x-gitlab-token': 't', 'x-api-key': 'k', accept: '*/*' }, { kind: 'json', value: { verification_token: 'tok' } }, locations, '[redacted]');
    expect(visible).toEqual({ headers: { accept: '*/*' }, body: { kind: 'json', value: { verification_token: '[redacted]' } } });
  });
});
