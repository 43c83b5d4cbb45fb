import type { SignedRequest } from '../signatures/request.js';
/** Fetches a sender's published key material (a PEM certificate, a JWKS document) as text. Injected: tests serve keys from a local server. */
export interface KeyFetcher { fetchText(url: string): Promise<string>; }
export interface VerifyContext {
  request: SignedRequest;
  /** The trigger's current secret and, during a rotation overlap, the previous one: a signature by any passes. */
  secrets: readonly string[];
  keys: KeyFetcher;
  /** Request method, upper case, and the parsed query (some senders sign the method or put tokens in the query). */
  method: string;
}
