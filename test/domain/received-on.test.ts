import { describe, expect, it } from 'vitest';
import { receivedOn } from '../../functions/domain/webhooks/received-on.js';

const API = 'https://abc123.execute-api.eu-west-1.amazonaws.com/webhooks';
const PATTERN = 'https://{apiId}.lambda-url.eu-west-1.on.aws';
const URL_ID = 'n4x7qkz2m5b8c1d3f6g9h0j2k4l6p8r0';
const ID = 'KEtnHMOjNdXx3uSYx71IK6ZJvVpCVIoZ';
const apiEvent = { routeKey: 'ANY /webhooks/{webhook_id}', rawPath: `/webhooks/${ID}`, pathParameters: { webhook_id: ID }, requestContext: { apiId: 'abc123' } };
const urlEvent = (rawPath: string) => ({ routeKey: '$default', rawPath, requestContext: { apiId: URL_ID } });

describe('receivedOn', () => {
  it('the API route: its path parameter, the API\'s URL', () => {
    expect(receivedOn(apiEvent, { apiBaseUrl: API, functionUrlPattern: PATTERN })).toEqual({ door: 'api', webhookId: ID, baseUrl: API });
  });

  it('the function URL: the whole path is the id, the URL made from the apiId AWS routed by, never from the request\'s host', () => {
    expect(receivedOn(urlEvent(`/${ID}`), { apiBaseUrl: API, functionUrlPattern: PATTERN })).toEqual({ door: 'function_url', webhookId: ID, baseUrl: `https://${URL_ID}.lambda-url.eu-west-1.on.aws` });
  });

  it.each([['/'], [`/webhooks/${ID}`], [`/${ID}/`], [`/${ID}/x`], ['']])('a function URL path %j names no trigger', (rawPath) => {
    expect(receivedOn(urlEvent(rawPath), { apiBaseUrl: API, functionUrlPattern: PATTERN }).webhookId).toBeUndefined();
  });

  it('a function URL event without the pattern set (no function URL deployed) names no trigger', () => {
    expect(receivedOn(urlEvent(`/${ID}`), { apiBaseUrl: API }).webhookId).toBeUndefined();
  });

  it('behind a custom domain the sender called the domain, whichever door', () => {
    const publicBaseUrl = 'https://hooks.example.com/webhooks';
    expect(receivedOn(apiEvent, { publicBaseUrl, apiBaseUrl: API, functionUrlPattern: PATTERN }).baseUrl).toBe(publicBaseUrl);
    expect(receivedOn(urlEvent(`/${ID}`), { publicBaseUrl, apiBaseUrl: API, functionUrlPattern: PATTERN }).baseUrl).toBe(publicBaseUrl);
  });
});
