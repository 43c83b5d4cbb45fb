import { SENDERS } from './catalog.js';
import type { SenderCategory } from './catalog-types.js';

/** A sender as `GET /signature-services` lists it: what a user needs to pick it and fill it in. */
export interface SignatureServiceListing {
  id: string;
  name: string;
  category: SenderCategory;
  docs_url: string;
  /** What to paste as `signature.secret`, in the sender's own words. */
  secret_label: string;
  /** The sender expects a handshake or a reply of its own (challenges, tokens to echo). */
  handshake: boolean;
}

/** A sender the catalog names but cannot verify, and why. */
export interface LeftOutSender {
  id: string;
  name: string;
  docs_url: string;
  reason: string;
}

/**
 * The catalog as the API, the OpenAPI document, the README and the console show it: the senders
 * a trigger can verify, in catalog order, and those left out with the reason. Built once.
 */
export const SIGNATURE_SERVICE_LISTING: { services: SignatureServiceListing[]; left_out: LeftOutSender[] } = {
  services: SENDERS.filter((row) => row.verification.primitive !== 'unsupported').map((row) => ({
    id: row.id, name: row.name, category: row.category, docs_url: row.docs_url, secret_label: row.secret_label, handshake: row.handshake,
  })),
  left_out: SENDERS.flatMap((row) => (row.verification.primitive === 'unsupported'
    ? [{ id: row.id, name: row.name, docs_url: row.docs_url, reason: row.verification.reason }]
    : [])),
};
