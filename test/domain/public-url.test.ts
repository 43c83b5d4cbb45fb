import { describe, expect, it } from 'vitest';
import { publicRequestUrl } from '../../functions/domain/webhooks/public-url.js';

describe('publicRequestUrl(publicBaseUrl, webhookId, rawQueryString)', () => {
  it('is the trigger URL under the configured base, with the query as sent', () => {
    expect(publicRequestUrl('https://abc.execute-api.us-east-1.amazonaws.com/webhooks', 'id1', 'api_key=a%20b&x=1')).toBe('https://abc.execute-api.us-east-1.amazonaws.com/webhooks/id1?api_key=a%20b&x=1');
  });

  it('uses a custom domain base as given, one slash between base and id, and no "?" without a query', () => {
    expect(publicRequestUrl('https://hooks.example.com/in/', 'id1', '')).toBe('https://hooks.example.com/in/id1');
  });
});
