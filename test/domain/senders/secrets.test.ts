import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SenderRow } from '../../../functions/domain/webhooks/senders/catalog-types.js';
import { customRow, SENDERS, senderRow } from '../../../functions/domain/webhooks/senders/catalog.js';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';

/*
 * checkSenderSecret(row, secret), family by family: a secret of the form the sender shows passes,
 * one of another form fails with a message naming the expected form, and each row's secret_label
 * names that form too. The proofs of every row check their own secrets pass as well
 * (test/support/sender-proof.ts and each non-HMAC proof file).
 */

const row = (id: string): SenderRow => senderRow(id)!;
const ed25519Hex = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
const p256Base64 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const p384Base64 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

interface Family {
  name: string;
  /** The rows of this family, recognised from their parameters. */
  has(row: SenderRow): boolean;
  good: string[];
  /** A malformed secret and words its message must contain. */
  bad: [secret: string, message: RegExp][];
  /** What the row's secret_label must say of the form. */
  label?: RegExp;
}

const FAMILIES: Family[] = [
  {
    name: 'HMAC keyed by the text of the secret',
    has: (r) => r.verification.primitive === 'hmac' && (r.verification.key.format === 'text' || r.verification.key.format === 'sha1_of_text'),
    good: ["It's a Secret to Everybody", 'whsec_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH', 'pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms7_6h3qd3uFSi9YCD3OLYAShQI90XTI5vEI'],
    bad: [
      [' secret-with-a-space', /starts or ends with spaces/],
      ['secret-with-a-newline\n', /starts or ends with spaces/],
      ['secret\u0000inside', /control character/],
    ],
  },
  {
    name: 'HMAC with a hex key (Adyen)',
    has: (r) => r.verification.primitive === 'hmac' && r.verification.key.format === 'hex',
    good: ['44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056', 'a1'.repeat(32)],
    bad: [
      ['not-a-hex-key', /hex/],
      ['44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA05', /even number/],
      [' 44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056', /hex/],
    ],
    label: /hex/i,
  },
  {
    name: 'HMAC with a base64 key (Airtable)',
    has: (r) => r.verification.primitive === 'hmac' && r.verification.key.format === 'base64' && r.verification.key.strip_prefix === undefined,
    good: [Buffer.from('airtable-mac-secret-one-32-bytes').toString('base64'), 'YWJj'],
    bad: [
      ['not base64!', /base64/],
      ['=', /base64/],
    ],
    label: /base64/i,
  },
  {
    name: 'HMAC with a whsec_ key (Svix, Resend, Clerk, Standard Webhooks)',
    has: (r) => r.verification.primitive === 'hmac' && r.verification.key.strip_prefix === 'whsec_',
    good: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    bad: [
      ['whsec_c2hvcnQ=', /whsec_.*at least 24 bytes/],
      ['whsec_', /whsec_/],
      ['whsec_not*base64*at*all*not*base64*at*all', /base64/],
    ],
    label: /whsec_/,
  },
  {
    name: 'Ed25519 public key (Discord)',
    has: (r) => r.verification.primitive === 'ed25519',
    good: [ed25519Hex, ed25519Hex.toUpperCase()],
    bad: [
      [ed25519Hex.slice(2), /64 hex characters/],
      [Buffer.from(ed25519Hex, 'hex').toString('base64'), /64 hex characters/],
    ],
    label: /64 hex characters/,
  },
  {
    name: 'ECDSA P-256 public key (SendGrid)',
    has: (r) => r.verification.primitive === 'ecdsa_p256',
    good: [p256Base64, 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA=='],
    bad: [
      ['MFkw', /base64 DER P-256 public key/],
      [p384Base64, /P-256/],
      [ed25519Hex, /P-256/],
    ],
    label: /base64 public key/,
  },
  {
    name: 'SNS topic ARN',
    has: (r) => r.verification.primitive === 'x509_rsa' && r.verification.message === 'aws_sns',
    good: ['arn:aws:sns:us-west-2:123456789012:MyTopic', 'arn:aws-cn:sns:cn-north-1:123456789012:orders.fifo'],
    bad: [
      ['MyTopic', /topic ARN/],
      ['arn:aws:sqs:us-west-2:123456789012:MyQueue', /topic ARN/],
    ],
    label: /ARN \(arn:aws:sns:/,
  },
  {
    name: 'PayPal webhook ID',
    has: (r) => r.verification.primitive === 'x509_rsa' && r.verification.message === 'paypal',
    good: ['1JE4291016473214C'],
    bad: [
      ['WH-2WR32451HC0233532-67976317FL4543714', /webhook ID/],
      ['https://example.com/hook', /webhook ID/],
    ],
    label: /Webhook ID/,
  },
  {
    name: "Google push: the subscription's audience and service account email",
    has: (r) => r.verification.primitive === 'jwt' && r.verification.key === 'jwks',
    good: ['https://hooks.example.com/webhooks/wh_1 push@my-project.iam.gserviceaccount.com'],
    bad: [
      ['push@my-project.iam.gserviceaccount.com', /audience, a space, and its service account email/],
      ['https://hooks.example.com/webhooks/wh_1', /service account email/],
    ],
    label: /audience, a space, and its service account email/,
  },
  {
    name: 'HS256 JWT secret (Netlify)',
    has: (r) => r.verification.primitive === 'jwt' && r.verification.key === 'secret',
    good: ['my-netlify-jws-secret'],
    bad: [[' my-netlify-jws-secret', /spaces/]],
  },
  {
    name: 'static token in a fixed header or field (GitLab, Telegram, Auth0, Microsoft Graph)',
    has: (r) => r.verification.primitive === 'static_token' && r.verification.location !== 'named_header',
    good: ['my-gitlab-webhook-token', 'Bearer my-auth0-log-stream-token', 'secretClientValue'],
    bad: [
      ['token\r\nX-Injected: 1', /line break/],
      ['token ', /spaces/],
      ['x'.repeat(8 * 1024 + 1), /longer than/],
    ],
  },
  {
    name: 'a header line the user chose (Okta, BigCommerce)',
    has: (r) => r.verification.primitive === 'static_token' && r.verification.location === 'named_header',
    good: ['Authorization: my-okta-shared-secret', 'X-Custom-Auth-Header: 7d4f7a2b-my-bigcommerce-value'],
    bad: [
      ['my-okta-shared-secret', /Name: value/],
      ['Bad Header: value', /Name: value/],
      ['Authorization:', /Name: value/],
    ],
    label: /Name: value/,
  },
  {
    name: 'one of several schemes: a Standard Webhooks signature by the client secret, or a header line (BigCommerce)',
    has: (r) => r.verification.primitive === 'any_of',
    good: ['hvx8ybz5m1c0o0j4f6pn2fy5b9jl0mk', 'X-Custom-Auth-Header: 7d4f7a2b-my-bigcommerce-value'],
    bad: [
      [' hvx8ybz5m1c0o0j4f6pn2fy5b9jl0mk', /spaces.*; or .*Name: value/],
      ['secret\r\nX-Injected: 1', /line break.*; or .*Name: value/],
    ],
    label: /client secret.*Name: value/,
  },
  {
    name: 'HTTP Basic (Postmark)',
    has: (r) => r.verification.primitive === 'basic',
    good: ['postmark-hooks:p@ss:w0rd', 'user:password'],
    bad: [
      ['postmark-hooks', /username:password/],
      [':password', /username:password/],
      ['user:', /username:password/],
    ],
    label: /username:password/,
  },
];

describe('checkSenderSecret(row, secret)', () => {
  it('refuses a secret without the start all of its sender\'s secrets have, in the words of its secret_label', () => {
    const prefixed = SENDERS.filter((r) => r.secret_prefix !== undefined);
    expect(prefixed.map((r) => r.id)).toContain('stripe');
    for (const r of prefixed) {
      expect(checkSenderSecret(r, 'sk_live_123'), r.id).toBe(`${r.name}'s secret is ${r.secret_label.charAt(0).toLowerCase()}${r.secret_label.slice(1)}: it starts with ${r.secret_prefix}, and this one does not`);
      expect(checkSenderSecret(r, `${r.secret_prefix}abc`), r.id).toBeUndefined();
    }
  });

  it('knows the family of every row that verifies (each row in exactly one)', () => {
    for (const r of SENDERS) {
      const families = FAMILIES.filter((f) => f.has(r)).map((f) => f.name);
      const verifies = r.verification.primitive !== 'unsupported' && r.verification.primitive !== 'configured';
      expect(families.length, `${r.id}: ${families.join(', ')}`).toBe(verifies ? 1 : 0);
    }
  });

  for (const family of FAMILIES) {
    describe(family.name, () => {
      const rows = SENDERS.filter((r) => family.has(r));

      it(`returns undefined for a secret of the expected form (${rows.map((r) => r.id).join(', ')})`, () => {
        // A row whose secrets all start alike (Stripe's whsec_) is given its good secrets with that start.
        const as = (r: SenderRow, secret: string) => (r.secret_prefix === undefined || secret.startsWith(r.secret_prefix) ? secret : `${r.secret_prefix}${secret}`);
        for (const r of rows) for (const secret of family.good) expect(checkSenderSecret(r, as(r, secret)), `${r.id}: ${secret}`).toBeUndefined();
      });

      it('names the expected form for a malformed secret', () => {
        // A row with a secret_prefix refuses these by their start first (tested below).
        for (const r of rows.filter((row) => row.secret_prefix === undefined)) {
          for (const [secret, message] of family.bad) expect(checkSenderSecret(r, secret), `${r.id}: ${JSON.stringify(secret)}`).toMatch(message);
        }
      });

      if (family.label) {
        const label = family.label;
        it(`says the same in each row's secret_label (${label})`, () => {
          for (const r of rows) expect(r.secret_label, r.id).toMatch(label);
        });
      }
    });
  }

  it('refuses an empty secret for every row', () => {
    for (const r of SENDERS) expect(checkSenderSecret(r, ''), r.id).toBe('the secret is empty');
  });

  it('says why an unsupported row takes no secret', () => {
    expect(checkSenderSecret(row('plaid'), 'any-value')).toMatch(/^Plaid cannot be verified here: .*client_id and secret/);
  });

  it('checks a custom row by the key its settings give', () => {
    const custom = customRow({ algorithm: 'sha256', key: { format: 'hex' }, content: [{ part: 'body' }], signature: { from: 'header', name: 'x-signature' }, encoding: 'hex' });
    expect(checkSenderSecret(custom, 'a1'.repeat(32))).toBeUndefined();
    expect(checkSenderSecret(custom, 'custom-secret-one')).toMatch(/hex/);
    // The bare row, before its settings are known: a key used as text.
    expect(checkSenderSecret(row('custom'), 'custom-secret-one')).toBeUndefined();
    expect(checkSenderSecret(row('custom'), 'custom-secret-one\n')).toMatch(/spaces/);
  });

  it('never throws, and answers undefined or a message, for any text on any row', () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.base64String(), fc.stringMatching(/^[0-9a-fA-F]{0,130}$/), fc.string().map((s) => `whsec_${s}`), fc.string().map((s) => `${s}: ${s}`));
    fc.assert(
      fc.property(fc.constantFrom(...SENDERS), text, (r, secret) => {
        const problem = checkSenderSecret(r, secret);
        return problem === undefined || (typeof problem === 'string' && problem.length > 0);
      }),
      { numRuns: 2000 },
    );
  });
});
