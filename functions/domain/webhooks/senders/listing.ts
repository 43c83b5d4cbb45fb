import { SENDERS } from './catalog.js';
import { eventNamesOf } from './event-names.js';
import type { SignatureServiceCatalog } from './listing-types.js';

export type { DeliveryPolicy, LeftOutSender, ListedEventNames, SignatureServiceCatalog, SignatureServiceListing } from './listing-types.js';

/**
 * The catalog as the API, the OpenAPI document, the senders guide and the console show it: the senders
 * a trigger can verify, in catalog order, and those left out with the reason. Built once.
 */
export const SIGNATURE_SERVICE_LISTING: SignatureServiceCatalog = {
  services: SENDERS.filter((row) => row.verification.primitive !== 'unsupported').map((row) => ({
    id: row.id, name: row.name, category: row.category, docs_url: row.docs_url, secret_label: row.secret_label, handshake: row.handshake,
    ...(row.limits !== undefined && { limits: row.limits }),
    needs_verify_token: row.needs_verify_token === true,
    event_type: row.event_type,
    delivery_id: row.delivery_id ?? null,
    batch: row.batch ?? null,
    delivery_policy: row.delivery_policy,
    event_names: eventNamesOf(row.id),
  })),
  left_out: SENDERS.flatMap((row) => (row.verification.primitive === 'unsupported'
    ? [{ id: row.id, name: row.name, docs_url: row.docs_url, reason: row.verification.reason }]
    : [])),
};
