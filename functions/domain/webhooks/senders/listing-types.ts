/*
 * The sender catalog as `GET /signature-services` lists it: shapes only. This module imports
 * nothing, so the console can take these types with a type-only import (as it does the
 * executions' in `flows/ports.ts`) without compiling the catalog's Node.js primitives.
 */

/** The categories a sender is listed under (the OpenAPI document's enum). */
export const SENDER_CATEGORIES = [
  'payments', 'code hosting', 'messaging', 'e-commerce', 'telecom', 'email', 'identity', 'productivity', 'monitoring', 'cloud', 'custom',
] as const;
export type SenderCategory = (typeof SENDER_CATEGORIES)[number];

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
  /**
   * What the sender's signature leaves unprotected, when it leaves something (a payload it does
   * not sign, a checksum where a MAC should be), and what the receiver does about it.
   */
  limits?: string;
  /** A trigger of this sender needs `signature.verify_token`, the token its handshake carries (Meta). */
  needs_verify_token: boolean;
  /** Where the sender puts a delivery's event type, which filters match (`$.trigger.type`). */
  event_type: ListedEventType;
  /** Where the sender puts its own id of a delivery (`$.trigger.event_id`); `null` when it has none. */
  delivery_id: ListedDeliveryId | null;
  /** One POST carries several events: where they are, and each one's type and id; `null` for a sender that sends one event a POST. */
  batch: ListedBatch | null;
  /** How long the sender waits for an answer, and how it retries one that fails or comes late. */
  delivery_policy: DeliveryPolicy;
  /**
   * Event names to pick a filter from: the list a package of the sender publishes, else the names
   * its documentation shows; `null` when neither gives any.
   */
  event_names: ListedEventNames | null;
}

/**
 * A sender's delivery time-out and retries, as its documentation says; `null` where it does not
 * (undocumented). A wait-mode trigger whose flow may take longer than `timeout_seconds` answers
 * after the sender gave up: it counts the delivery failed and, as `retries` says, may send it again.
 */
export interface DeliveryPolicy {
  /** Seconds the sender waits for an answer before it counts the attempt failed. */
  timeout_seconds: number | null;
  /** Seconds after the first attempt within which the sender retries a failed delivery; 0: it never retries by itself. */
  retry_window_seconds: number | null;
  /** The sender's schedule and what it counts as a failure, in a sentence or two. */
  retries: string;
  /** A figure comes from a secondary source, or could not be confirmed in the sender's own documentation. */
  unconfirmed?: true;
}

/** A sender's event names, and where they come from (a package and the type that lists them, or its documentation). */
export interface ListedEventNames {
  names: string[];
  source: string;
}

/** A value a request carries: a header (its lower-case name), or a member of the JSON body by its path. */
export type ListedRequestValue = { from: 'header'; name: string } | { from: 'json'; path: string[] };
/** A type that is a name: the first of `among` the JSON body holds as a top-level member. */
export type ListedPresentKey = { from: 'json_key'; among: string[] };

/**
 * The first of `sources` present is the type; none: the sender's deliveries carry no type, and
 * `note` says what a filter can match instead.
 */
export interface ListedEventType {
  sources: (ListedRequestValue | ListedPresentKey)[];
  /** One type as the sender writes it. */
  example?: string;
  note?: string;
}

/** `signed`: the sender's signature covers it, so deduplication keys on it; else it is shown, never trusted. */
export type ListedDeliveryId = ListedRequestValue & { signed: boolean };

/** Where a batching sender's events are in its JSON body, and what each says of itself. */
export interface ListedBatch {
  /** The path of the list; `[]` for a body that is the list itself. */
  list: string[];
  /**
   * A list of lists (Meta's `entry[].changes[]`): each outer element's inner list at `list`; its
   * elements are the events, each given the outer element's `parent.fields` under `parent.as`.
   */
  nested?: { list: string[]; parent: { as: string; fields: string[] } };
  /** Where an element's type is, relative to the element: the first path holding text. */
  type: string[][];
  /**
   * Where an element's own id is (several paths: the values joined with `:`). `signed`: the row's
   * signature covers the body, so deduplication keys on it; otherwise on the element's SHA-256.
   */
  id?: { paths: string[][]; signed: boolean };
  /** What the sender's documentation says of its batches and ids, for the listing. */
  note?: string;
}

/** A sender the catalog names but cannot verify, and why. */
export interface LeftOutSender {
  id: string;
  name: string;
  docs_url: string;
  reason: string;
}

/** The body's `data` of `GET /signature-services`: the senders a trigger can verify, in catalog order, and those left out. */
export interface SignatureServiceCatalog {
  services: SignatureServiceListing[];
  left_out: LeftOutSender[];
}
