import { webhookUrl } from '../triggers/webhook-url.js';

/** What of a request says which URL its sender called. */
export interface RequestLocation {
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** API Gateway's `requestContext.domainName`, used when there is no Host header. */
  domainName: string;
  rawPath: string;
  rawQueryString: string;
}

/**
 * The URL the sender called, which Twilio signs: under `publicBaseUrl` when the service sits behind
 * a custom domain, else rebuilt from the request (API Gateway's `x-forwarded-*` headers and Host),
 * with the port only when it is not the scheme's default.
 */
export function publicRequestUrl(location: RequestLocation, webhookId: string, publicBaseUrl?: string): string {
  const query = location.rawQueryString ? `?${location.rawQueryString}` : '';
  if (publicBaseUrl) return `${webhookUrl(publicBaseUrl, webhookId)}${query}`;
  const { headers } = location;
  const proto = headers['x-forwarded-proto'] ?? 'https';
  const host = headers.host ?? location.domainName;
  const port = headers['x-forwarded-port'];
  const defaultPort = (proto === 'https' && port === '443') || (proto === 'http' && port === '80');
  const hostWithPort = host.includes(':') || !port || defaultPort ? host : `${host}:${port}`;
  return `${proto}://${hostWithPort}${location.rawPath}${query}`;
}
