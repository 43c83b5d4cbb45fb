import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SenderCategory } from '../../../functions/domain/webhooks/senders/catalog-types.js';
import { SENDERS } from '../../../functions/domain/webhooks/senders/catalog.js';
import type { KeyFetcher } from '../../../functions/domain/webhooks/senders/context.js';
import { validateHmacParams } from '../../../functions/domain/webhooks/senders/primitives/hmac-params.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { contextFor } from '../../support/verify-context.js';
import { SENDERS_MD_IDS } from '../../support/senders-md.js';

const SENDERS_MD = resolve(import.meta.dirname, '../../../../shared/senders.md');
const CATEGORIES: readonly SenderCategory[] = ['payments', 'code hosting', 'messaging', 'e-commerce', 'telecom', 'email', 'identity', 'productivity', 'monitoring', 'cloud', 'custom'];

interface ProofFile {
  name: string;
  source: string;
}

/** The files of test/domain/senders/ (this folder's top level) that prove rows: those using test/support/sender-proof.ts. */
const PROOF_FILES: readonly ProofFile[] = readdirSync(import.meta.dirname)
  .filter((name) => name.endsWith('.test.ts') && name !== 'catalog.test.ts')
  .map((name) => ({ name, source: readFileSync(join(import.meta.dirname, name), 'utf8') }))
  .filter((file) => file.source.includes('support/sender-proof.js'));

/** Where a proof names the row it proves: `rowOf('discord')`, `proveHmacSender('stripe', …)`, `senderRow('x')`, a table's `id: 'vercel'`, or `for (const id of ['resend', …])`. */
const NAMED_ROW = [/\b(?:rowOf|senderRow|proveHmacSender)\(\s*'([a-z0-9_]+)'/g, /\bid: '([a-z0-9_]+)'/g];
const ID_LOOP = /for \(const id of \[([^\]]*)\]\)/g;

/**
 * The rows proven by `files`: each proof file goes through the catalog's own row (rowOf /
 * proveHmacSender, then verifySender), so what it proves is the row that ships. A file written
 * on another branch counts the same way when it lands, without a change here.
 */
function provenIn(files: readonly ProofFile[]): Set<string> {
  const proven = new Set<string>();
  for (const { source } of files) {
    for (const pattern of NAMED_ROW) for (const match of source.matchAll(pattern)) proven.add(match[1]!);
    for (const loop of source.matchAll(ID_LOOP)) for (const id of loop[1]!.matchAll(/'([a-z0-9_]+)'/g)) proven.add(id[1]!);
  }
  return proven;
}

/** Every row that verifies requests needs a proof: all but `unsupported` rows and the bare `custom` row (`configured`, proven with settings through customRow). */
const NEED_PROOF = SENDERS.filter((row) => row.verification.primitive !== 'unsupported' && row.verification.primitive !== 'configured');
const unproven = (proven: Set<string>) => NEED_PROOF.filter((row) => !proven.has(row.id)).map((row) => row.id);

describe('sender catalog', () => {
  it('has a row for every id of shared/senders.md, then standard_webhooks and custom, each once', () => {
    if (existsSync(SENDERS_MD)) {
      const table = readFileSync(SENDERS_MD, 'utf8');
      const fromFile = [...table.matchAll(/^\| (`[a-z0-9_]+`(?:, `[a-z0-9_]+`)*) \|/gm)].flatMap((m) => m[1]!.split(', ').map((id) => id.slice(1, -1)));
      expect(fromFile).toEqual(SENDERS_MD_IDS);
    }
    expect(SENDERS.map((row) => row.id)).toEqual([...SENDERS_MD_IDS, 'standard_webhooks', 'custom']);
  });

  it('gives every row a name, a category, an https docs link and a secret label', () => {
    for (const row of SENDERS) {
      expect(row.name, row.id).not.toBe('');
      expect(CATEGORIES, row.id).toContain(row.category);
      expect(new URL(row.docs_url).protocol, row.id).toBe('https:');
      expect(row.secret_label, row.id).not.toBe('');
    }
  });

  it('states every HMAC row as parameters a custom configuration could give too', () => {
    for (const row of SENDERS) {
      if (row.verification.primitive !== 'hmac') continue;
      const { primitive: _hmac, ...params } = row.verification;
      const check = validateHmacParams(JSON.parse(JSON.stringify(params)));
      expect(check.ok ? 'valid' : check.message, row.id).toBe('valid');
    }
  });

  it('marks the handshake column of shared/senders.md', () => {
    const withHandshake = SENDERS.filter((row) => row.handshake).map((row) => row.id);
    expect(withHandshake).toEqual([
      'slack', 'discord', 'woocommerce', 'twilio', 'adyen', 'zoom', 'twitch', 'microsoft_graph', 'aws_sns',
      'intercom', 'asana', 'notion', 'okta', 'meta', 'dropbox', 'x',
    ]);
  });

  it('lists at least 48 of the senders as supported, and says why for each one that is not', () => {
    const unsupported = SENDERS.filter((row) => row.verification.primitive === 'unsupported');
    for (const row of unsupported) expect(row.verification.primitive === 'unsupported' && row.verification.reason.length > 20, row.id).toBe(true);
    expect(SENDERS_MD_IDS.length - unsupported.filter((row) => SENDERS_MD_IDS.includes(row.id)).length).toBeGreaterThanOrEqual(48);
    expect(unsupported.map((row) => row.id)).toEqual(['plaid']);
  });

  it('has a proof for every row that is not unsupported or configured', () => {
    const proven = provenIn(PROOF_FILES);
    expect(unproven(proven)).toEqual([]);
    const rest = SENDERS.filter((row) => !NEED_PROOF.includes(row)).map((row) => `${row.id} (${row.verification.primitive})`);
    console.info(`sender proofs: ${NEED_PROOF.length} of ${SENDERS.length} rows proven; without a row proof: ${rest.join(', ')}`);
  });

  it('would fail for a row whose proof is gone', () => {
    expect(unproven(provenIn(PROOF_FILES.filter((file) => file.name !== 'discord.test.ts')))).toEqual(['discord']);
  });

  it("no proof calls a primitive's verifier itself: each goes through its row and verifySender", () => {
    const files = readdirSync(import.meta.dirname).filter((name) => name.endsWith('.test.ts'));
    const direct = files.filter((name) =>
      /import \{[^}]*\bverify(?:Hmac|Ed25519|EcdsaP256|X509Rsa|Jwt|StaticToken|Basic)\b[^}]*\} from '[^']*\/primitives\//.test(readFileSync(join(import.meta.dirname, name), 'utf8')),
    );
    expect(direct).toEqual([]);
  });

  it('never throws or rejects for any row on malformed requests, secrets and fetched keys: each answers true or false', async () => {
    // Every lower-case header name any row reads, so arbitrary values land where a primitive looks.
    const names = new Set(['authorization', 'content-type', 'paypal-transmission-id', 'paypal-transmission-time', 'paypal-transmission-sig', 'paypal-cert-url', 'paypal-auth-algo']);
    const collect = (value: unknown): void => {
      if (typeof value === 'string' && /^[a-z0-9-]{3,64}$/.test(value)) names.add(value);
      else if (value && typeof value === 'object') Object.values(value).forEach(collect);
    };
    SENDERS.forEach((row) => collect(row.verification));
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.base64String(), fc.stringMatching(/^[0-9a-f]{0,140}$/), fc.constantFrom('Bearer x.y.z', 'Basic Og==', 'v1,AAAA', 't=1,v1=00'));
    const fetched = fc.constantFrom('', 'not a key', '{"keys":"none"}', '{"keys":[{"kty":"RSA"}]}', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', 'reject');
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 256 }),
      fc.json().map((json) => Buffer.from(json)),
      fc.record({ Type: fc.constantFrom('Notification', 'SubscriptionConfirmation'), SignatureVersion: fc.constantFrom('1', '2'), Signature: text, SigningCertURL: fc.constantFrom('https://sns.us-east-1.amazonaws.com/a.pem', 'http://x'), TopicArn: text, Message: text, MessageId: text, Timestamp: text }).map((m) => Buffer.from(JSON.stringify(m))),
      fc.record({ value: fc.array(fc.record({ clientState: text })) }).map((m) => Buffer.from(JSON.stringify(m))),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SENDERS),
        fc.record({
          headers: fc.dictionary(fc.constantFrom(...names, '__proto__', 'constructor'), text),
          body,
          secrets: fc.array(text.filter(Boolean), { minLength: 1, maxLength: 3 }),
          nowSeconds: fc.integer({ min: 0, max: 4_102_444_800 }),
          fetched,
        }),
        async (row, input) => {
          const keys: KeyFetcher = { fetchText: async () => (input.fetched === 'reject' ? Promise.reject(new Error('unreachable')) : input.fetched) };
          const verdict = await verifySender(row, contextFor({ ...input, keys }));
          return typeof verdict === 'boolean';
        },
      ),
      { numRuns: 3000 },
    );
  }, 60_000);
});
