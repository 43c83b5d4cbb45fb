import { describe, expect, it } from 'vitest';
import {
  checkSecretFor, parseApiKeyRegeneration, parseSigningSecretRotation, parseTriggerPatch, parseTriggerSettings,
} from '../../functions/domain/triggers/trigger-requests.js';
import { AppError } from '../../functions/shared/errors.js';
import { DEFAULT_TRIGGER_SETTINGS } from '../support/webhooks.js';

const FLOWS: ReadonlySet<string> = new Set(['echo', 'route-by-type']);
/** 24 random bytes as Svix issues them. */
const WHSEC = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const CUSTOM = { algorithm: 'sha256', header: 'X-Signature', encoding: 'hex' };

/** The validation error a call throws, so a test can say which rule refused it. */
function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a validation_error, but the settings were accepted');
}

const create = (body: unknown) => parseTriggerSettings(body, FLOWS);
const patch = (body: unknown) => parseTriggerPatch(body, FLOWS);

describe('parseTriggerSettings: defaults', () => {
  it('fills every optional field with its documented default', () => {
    expect(create({ flow: 'echo' })).toEqual(DEFAULT_TRIGGER_SETTINGS);
  });

  it('keeps every field that is given', () => {
    const settings = {
      flow: 'route-by-type',
      response_mode: 'wait',
      event_filter: ['invoice.paid', 'customer.*'],
      api_key_enabled: true,
      signature: { service: 'github', secret: 's3cret' },
      allowed_source_ips: ['192.0.2.0/24', '2001:db8::/32', '198.51.100.7'],
      enabled: false,
      deduplicate: true,
      acknowledge_response: { status_code: 200, content_type: 'text/plain', body: '[accepted]' },
    };
    expect(create(settings)).toEqual(settings);
  });
});

describe('parseTriggerSettings: flow', () => {
  it('is required', () => {
    expect(refusal(() => create({})).code).toBe('validation_error');
  });

  it.each([['has space'], ['a/b'], ['../echo'], ['echo.asl.json'], [''], ['x'.repeat(65)], [42]])('refuses the malformed name %j', (flow) => {
    expect(refusal(() => create({ flow })).code).toBe('validation_error');
  });

  it('refuses a well-formed name with no definition in the flows folder', () => {
    const error = refusal(() => create({ flow: 'not-deployed' }));
    expect(error.code).toBe('validation_error');
    expect(error.detail).toBe('unknown flow');
  });

  it('accepts a 64-character name when that flow exists', () => {
    const long = 'f'.repeat(64);
    expect(parseTriggerSettings({ flow: long }, new Set([long])).flow).toBe(long);
  });
});

describe('parseTriggerSettings: response_mode, enabled, api_key_enabled, deduplicate', () => {
  it.each(['sync', 'WAIT', '', null, 1])('refuses response_mode %j', (response_mode) => {
    expect(refusal(() => create({ flow: 'echo', response_mode })).code).toBe('validation_error');
  });

  it.each(['enabled', 'api_key_enabled', 'deduplicate'])('%s must be a boolean, not a string', (field) => {
    expect(refusal(() => create({ flow: 'echo', [field]: 'true' })).code).toBe('validation_error');
  });
});

describe('parseTriggerSettings: event_filter', () => {
  it('accepts exact names and a trailing-* prefix', () => {
    expect(create({ flow: 'echo', event_filter: ['push', 'customer.*'] }).event_filter).toEqual(['push', 'customer.*']);
  });

  it.each([
    ['not an array', 'push'],
    ['an empty name', ['']],
    ['a * that is not trailing', ['cust*omer']],
    ['a leading *', ['*.created']],
    ['a non-string entry', [1]],
    ['a name over 256 characters', ['x'.repeat(257)]],
    ['more than 100 entries', Array.from({ length: 101 }, (_, i) => `e${i}`)],
  ])('refuses %s', (_why, event_filter) => {
    expect(refusal(() => create({ flow: 'echo', event_filter })).code).toBe('validation_error');
  });
});

describe('parseTriggerSettings: signature', () => {
  it.each([['stripe', 'whsec_abc'], ['github', 'abc'], ['slack', 'abc'], ['shopify', 'abc'], ['twilio', 'abc']])('accepts %s with a secret', (service, secret) => {
    expect(create({ flow: 'echo', signature: { service, secret } }).signature).toEqual({ service, secret });
  });

  it('null means no signature', () => {
    expect(create({ flow: 'echo', signature: null }).signature).toBeNull();
  });

  it('refuses a service without a secret', () => {
    expect(refusal(() => create({ flow: 'echo', signature: { service: 'stripe' } })).code).toBe('validation_error');
  });

  it('refuses an empty secret (an empty HMAC key is forgeable)', () => {
    expect(refusal(() => create({ flow: 'echo', signature: { service: 'stripe', secret: '' } })).code).toBe('validation_error');
  });

  it('refuses a secret without a service', () => {
    expect(refusal(() => create({ flow: 'echo', signature: { secret: 'abc' } })).code).toBe('validation_error');
  });

  it('refuses an unknown service', () => {
    expect(refusal(() => create({ flow: 'echo', signature: { service: 'acme_pay', secret: 'abc' } })).code).toBe('validation_error');
  });

  it('refuses an unknown field inside signature', () => {
    expect(refusal(() => create({ flow: 'echo', signature: { service: 'github', secret: 'abc', tolerance: 60 } })).code).toBe('validation_error');
  });

  it('refuses a secret over 1024 characters', () => {
    expect(refusal(() => create({ flow: 'echo', signature: { service: 'github', secret: 'x'.repeat(1025) } })).code).toBe('validation_error');
  });
});

describe('parseTriggerSettings: standard_webhooks secret', () => {
  it('accepts whsec_<base64 of 24 bytes>', () => {
    expect(create({ flow: 'echo', signature: { service: 'standard_webhooks', secret: WHSEC } }).signature?.secret).toBe(WHSEC);
  });

  it.each([
    ['not base64', 'whsec_not*base64!'],
    ['too short a key', `whsec_${Buffer.alloc(8).toString('base64')}`],
    ['only the prefix', 'whsec_'],
  ])('refuses %s', (_why, secret) => {
    const error = refusal(() => create({ flow: 'echo', signature: { service: 'standard_webhooks', secret } }));
    expect(error.code).toBe('validation_error');
    expect(error.detail).toContain('whsec_');
  });
});

describe('parseTriggerSettings: custom signature settings', () => {
  it('accepts algorithm, header, encoding, prefix and timestamp_header, and lower-cases the header names', () => {
    const signature = {
      service: 'custom',
      secret: 'abc',
      custom: { algorithm: 'sha512', header: 'X-Acme-Signature', encoding: 'base64', prefix: 'v1=', timestamp_header: 'X-Acme-Timestamp' },
    };
    expect(create({ flow: 'echo', signature }).signature?.custom).toEqual({
      algorithm: 'sha512',
      header: 'x-acme-signature',
      encoding: 'base64',
      prefix: 'v1=',
      timestamp_header: 'x-acme-timestamp',
    });
  });

  it.each(['sha1', 'sha256', 'sha512'])('accepts algorithm %s', (algorithm) => {
    expect(create({ flow: 'echo', signature: { service: 'custom', secret: 'abc', custom: { ...CUSTOM, algorithm } } }).signature?.custom?.algorithm).toBe(algorithm);
  });

  it('refuses service custom without its settings', () => {
    const error = refusal(() => create({ flow: 'echo', signature: { service: 'custom', secret: 'abc' } }));
    expect(error.code).toBe('validation_error');
    expect(error.detail).toContain('custom');
  });

  it('refuses custom settings on another service', () => {
    const error = refusal(() => create({ flow: 'echo', signature: { service: 'github', secret: 'abc', custom: CUSTOM } }));
    expect(error.code).toBe('validation_error');
    expect(error.detail).toContain('custom');
  });

  it.each([
    ['an unknown algorithm', { ...CUSTOM, algorithm: 'md5' }],
    ['an unknown encoding', { ...CUSTOM, encoding: 'base32' }],
    ['no header', { algorithm: 'sha256', encoding: 'hex' }],
    ['no algorithm', { header: 'X-Signature', encoding: 'hex' }],
    ['no encoding', { algorithm: 'sha256', header: 'X-Signature' }],
    ['a header name with a space', { ...CUSTOM, header: 'X Signature' }],
    ['a header name with a colon', { ...CUSTOM, header: 'X-Signature:' }],
    ['an empty prefix', { ...CUSTOM, prefix: '' }],
    ['a malformed timestamp_header', { ...CUSTOM, timestamp_header: 'bad header' }],
    ['an unknown field', { ...CUSTOM, tolerance_seconds: 60 }],
  ])('refuses custom settings with %s', (_why, custom) => {
    expect(refusal(() => create({ flow: 'echo', signature: { service: 'custom', secret: 'abc', custom } })).code).toBe('validation_error');
  });
});

describe('parseTriggerSettings: allowed_source_ips', () => {
  it.each([
    ['an IPv4 address', '203.0.113.7'],
    ['an IPv4 range', '10.0.0.0/8'],
    ['an IPv4 range with host bits set', '10.1.2.3/8'],
    ['every IPv4 address', '0.0.0.0/0'],
    ['one IPv4 address as a /32', '192.0.2.1/32'],
    ['an IPv6 address', '2001:db8::1'],
    ['an IPv6 range', '2001:db8::/32'],
    ['an IPv6 /128', '::1/128'],
    ['upper-case IPv6', '2001:DB8::/32'],
    ['a full IPv6 address', '2001:0db8:0000:0000:0000:ff00:0042:8329'],
    ['an IPv4-mapped IPv6 range', '::ffff:192.0.2.0/120'],
  ])('accepts %s (%s)', (_why, entry) => {
    expect(create({ flow: 'echo', allowed_source_ips: [entry] }).allowed_source_ips).toEqual([entry]);
  });

  it.each([
    ['empty', ''],
    ['a host name', 'localhost'],
    ['three octets', '10.0.0'],
    ['an octet over 255', '256.1.1.1'],
    ['an octet with a leading zero', '010.0.0.1'],
    ['an IPv4 prefix over 32', '10.0.0.0/33'],
    ['an IPv6 prefix over 128', '2001:db8::/129'],
    ['a prefix with a leading zero', '10.0.0.0/08'],
    ['a negative prefix', '10.0.0.0/-1'],
    ['an empty prefix', '10.0.0.0/'],
    ['two prefixes', '10.0.0.0/8/8'],
    ['a range written as two addresses', '10.0.0.1-10.0.0.9'],
    ['two double colons', '2001:db8:::1'],
    ['an IPv6 zone', 'fe80::1%eth0'],
    ['spaces around it', ' 10.0.0.1'],
    ['a wildcard', '10.0.0.*'],
    ['a URL', 'http://10.0.0.1'],
  ])('refuses %s (%j)', (_why, entry) => {
    expect(refusal(() => create({ flow: 'echo', allowed_source_ips: [entry] })).code).toBe('validation_error');
  });

  it('defaults to null: any address', () => {
    expect(create({ flow: 'echo' }).allowed_source_ips).toBeNull();
  });

  it('takes up to 50 entries, not 51', () => {
    const entries = (count: number) => Array.from({ length: count }, (_, i) => `192.0.2.${i}`);
    expect(create({ flow: 'echo', allowed_source_ips: entries(50) }).allowed_source_ips).toHaveLength(50);
    expect(refusal(() => create({ flow: 'echo', allowed_source_ips: entries(51) })).code).toBe('validation_error');
  });

  it('refuses an empty list, which would read as "nothing allowed": any address is null', () => {
    expect(refusal(() => create({ flow: 'echo', allowed_source_ips: [] })).code).toBe('validation_error');
  });

  it.each([['a string', '10.0.0.0/8'], ['a number', 10], ['an object', { cidr: '10.0.0.0/8' }], ['a list with a number', [10]]])(
    'refuses %s',
    (_why, value) => {
      expect(refusal(() => create({ flow: 'echo', allowed_source_ips: value })).code).toBe('validation_error');
    },
  );

  it('PATCH sets and removes it', () => {
    expect(patch({ allowed_source_ips: ['10.0.0.0/8'] })).toEqual({ allowed_source_ips: ['10.0.0.0/8'] });
    expect(patch({ allowed_source_ips: null })).toEqual({ allowed_source_ips: null });
    expect(refusal(() => patch({ allowed_source_ips: ['nope'] })).code).toBe('validation_error');
  });
});

describe('parseSigningSecretRotation', () => {
  it('keeps the old secret for 24 hours by default', () => {
    expect(parseSigningSecretRotation({ secret: 'new' })).toEqual({ secret: 'new', previous_secret_expires_in_seconds: 86400 });
  });

  it.each([0, 1, 604800])('takes an overlap of %i seconds', (seconds) => {
    expect(parseSigningSecretRotation({ secret: 'new', previous_secret_expires_in_seconds: seconds }).previous_secret_expires_in_seconds).toBe(seconds);
  });

  it.each([
    ['no secret', { previous_secret_expires_in_seconds: 60 }],
    ['an empty secret', { secret: '' }],
    ['a secret over 1024 characters', { secret: 'x'.repeat(1025) }],
    ['a secret that is not a string', { secret: 42 }],
    ['an overlap over 7 days', { secret: 'new', previous_secret_expires_in_seconds: 604801 }],
    ['a negative overlap', { secret: 'new', previous_secret_expires_in_seconds: -1 }],
    ['a fractional overlap', { secret: 'new', previous_secret_expires_in_seconds: 1.5 }],
    ['an overlap as a string', { secret: 'new', previous_secret_expires_in_seconds: '60' }],
    ['an unknown field', { secret: 'new', service: 'github' }],
    ['not an object', ['new']],
  ])('refuses %s', (_why, body) => {
    expect(refusal(() => parseSigningSecretRotation(body)).code).toBe('validation_error');
  });
});

describe('checkSecretFor', () => {
  it('holds a rotated secret to the rules of its scheme: standard_webhooks takes only whsec_<base64>', () => {
    expect(() => checkSecretFor({ service: 'standard_webhooks' }, WHSEC)).not.toThrow();
    expect(refusal(() => checkSecretFor({ service: 'standard_webhooks' }, 'plain')).code).toBe('validation_error');
    expect(() => checkSecretFor({ service: 'github' }, 'plain')).not.toThrow();
  });

  it('takes the stored custom settings (header already lower-case)', () => {
    expect(() => checkSecretFor({ service: 'custom', custom: { algorithm: 'sha256', header: 'x-signature', encoding: 'hex' } }, 'new')).not.toThrow();
  });
});

describe('parseApiKeyRegeneration', () => {
  it('by default the old key stops at once', () => {
    expect(parseApiKeyRegeneration({})).toEqual({ previous_key_expires_in_seconds: 0 });
  });

  it('takes an overlap up to 7 days', () => {
    expect(parseApiKeyRegeneration({ previous_key_expires_in_seconds: 604800 })).toEqual({ previous_key_expires_in_seconds: 604800 });
  });

  it.each([
    ['an overlap over 7 days', { previous_key_expires_in_seconds: 604801 }],
    ['a negative overlap', { previous_key_expires_in_seconds: -5 }],
    ['null', { previous_key_expires_in_seconds: null }],
    ['an unknown field', { previous_secret_expires_in_seconds: 60 }],
  ])('refuses %s', (_why, body) => {
    expect(refusal(() => parseApiKeyRegeneration(body)).code).toBe('validation_error');
  });
});

describe('parseTriggerSettings: unknown and read-only fields', () => {
  it.each(['flows', 'id', 'webhook_id', 'url', 'created_at', 'api_key', 'previous_api_key_expires_at', '__proto__'])('refuses the field %s', (field) => {
    const body = JSON.parse(`{"flow":"echo",${JSON.stringify(field)}:"x"}`);
    expect(refusal(() => create(body)).code).toBe('validation_error');
  });

  it('refuses a body that is not an object', () => {
    expect(refusal(() => create(['echo'])).code).toBe('validation_error');
  });
});

describe('parseTriggerPatch', () => {
  it('takes any subset of the settings, without filling in defaults', () => {
    expect(patch({ enabled: false })).toEqual({ enabled: false });
  });

  it('refuses an empty change', () => {
    const error = refusal(() => patch({}));
    expect(error.code).toBe('validation_error');
    expect(error.detail).toBe('nothing to change');
  });

  it('refuses an unknown flow', () => {
    expect(refusal(() => patch({ flow: 'not-deployed' })).detail).toBe('unknown flow');
  });

  it('applies the same field rules as create', () => {
    expect(refusal(() => patch({ response_mode: 'later' })).code).toBe('validation_error');
    expect(refusal(() => patch({ event_filter: ['*x'] })).code).toBe('validation_error');
    expect(refusal(() => patch({ signature: { service: 'custom', secret: 'abc' } })).code).toBe('validation_error');
  });

  it('refuses read-only and unknown fields', () => {
    expect(refusal(() => patch({ webhook_id: 'x' })).code).toBe('validation_error');
    expect(refusal(() => patch({ colour: 'blue' })).code).toBe('validation_error');
  });

  it('signature null removes the signature', () => {
    expect(patch({ signature: null })).toEqual({ signature: null });
  });
});
