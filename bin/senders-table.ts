import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SENDERS } from '../functions/domain/webhooks/senders/catalog.js';
import type { Verification } from '../functions/domain/webhooks/senders/catalog-types.js';

/**
 * `npm run docs:senders`: writes the README's "Senders" table from the sender catalog, between
 * its two markers, so the README never lists senders by hand (a test checks it is current).
 */
export const README = resolve(import.meta.dirname, '../README.md');
export const TABLE_START = '<!-- senders table: written by `npm run docs:senders` from functions/domain/webhooks/senders/catalog.ts -->';
export const TABLE_END = '<!-- end of senders table -->';

/** How a row is verified, in a few words. */
function verifiedBy(verification: Verification): string {
  switch (verification.primitive) {
    case 'hmac': return `HMAC-${verification.algorithm.toUpperCase()}`;
    case 'ed25519': return 'Ed25519';
    case 'ecdsa_p256': return 'ECDSA P-256';
    case 'x509_rsa': return 'RSA, by the sender\'s X.509 certificate';
    case 'jwt': return 'JWT';
    case 'static_token': return 'static token';
    case 'basic': return 'HTTP Basic';
    case 'configured': return 'your HMAC settings';
    case 'unsupported': return `not verified: ${verification.reason}`;
  }
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The table, one row per catalog row, in the catalog's order. */
export function sendersTable(): string {
  const rows = SENDERS.map((row) =>
    `| [${cell(row.name)}](${row.docs_url}) | \`${row.id}\` | ${row.category} | ${cell(verifiedBy(row.verification))} | ${cell(row.secret_label)} | ${row.handshake ? 'yes' : ''} |`);
  return ['| Sender | `signature.service` | Group | Verified by | `signature.secret` | Handshake |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** The README with its table replaced by the catalog's. */
export function readmeWithSendersTable(readme: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`README.md has no senders table markers (${TABLE_START} … ${TABLE_END})`);
  return `${readme.slice(0, start + TABLE_START.length)}\n${sendersTable()}\n${readme.slice(end)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(README, readmeWithSendersTable(readFileSync(README, 'utf8')));
  console.log(`README.md: senders table written (${SENDERS.length} rows)`);
}
