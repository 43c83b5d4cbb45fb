import { createHash } from 'node:crypto';
import type { PublicSigningKey } from './ports.js';

/**
 * The public JWK of a P-256 key with its `kid`: the RFC 7638 thumbprint, so the kid names the key
 * itself and stays the same wherever (KMS, the data directory) and whenever it is computed.
 */
export function publicSigningKey(point: { x: string; y: string }): PublicSigningKey {
  // RFC 7638 §3.2: the required members in lexicographic order, no whitespace.
  const canonical = JSON.stringify({ crv: 'P-256', kty: 'EC', x: point.x, y: point.y });
  const kid = createHash('sha256').update(canonical, 'utf8').digest('base64url');
  return { kty: 'EC', crv: 'P-256', x: point.x, y: point.y, kid, alg: 'ES256', use: 'sig' };
}
