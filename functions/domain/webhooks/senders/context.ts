import type { SignedRequest } from '../signatures/request.js';

/** Fetches a sender's published key material (a PEM certificate, a JWKS document) as text. Injected: tests serve keys from a local server. */
export interface KeyFetcher {
  fetchText(url: string): Promise<string>;
  /**
   * The bytes of a CA's issuer certificate (DER or PEM) at `url`, an AIA "CA Issuers" URI the
   * primitive has checked against the row's hosts; http allowed, as CAs publish them so (what is
   * fetched is believed only once it chains to a trusted root). Cached like `fetchText`. A
   * fetcher without it completes no chain (test fakes for senders that fetch no issuer).
   */
  fetchIssuer?(url: string): Promise<Uint8Array>;
  /**
   * Root certificates (PEM) a fetched signing certificate's chain must lead to, where the sender's
   * row asks for it (SNS); Node's bundled roots (`tls.rootCertificates`) when absent. Tests that
   * sign with a certificate of their own name their test root here.
   */
  readonly trustedRoots?: readonly string[];
}

/** Everything a verification primitive may look at: the request, the trigger's secrets, and the injected key fetcher. */
export interface VerifyContext {
  request: SignedRequest;
  /** The trigger's current secret and, during a rotation overlap, the previous one: a signature by any passes. */
  secrets: readonly string[];
  keys: KeyFetcher;
  /**
   * Request method, upper case (some senders sign it, HubSpot v3 for one). The query, where a
   * sender puts a token or signs it, is part of `request.url`, the URL as the sender called it.
   */
  method: string;
}
