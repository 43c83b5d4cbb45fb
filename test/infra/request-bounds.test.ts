import { describe, expect, it } from 'vitest';
import {
  EVENT_BODY_EXPANSION, EVENT_ENVELOPE_RESERVE_BYTES, LAMBDA_INVOCATION_PAYLOAD_BYTES, MAX_WEBHOOK_BODY_BYTES,
} from '../../functions/domain/webhooks/body-limit.js';
import { API_GATEWAY_INTEGRATION_TIMEOUT_MS, MAX_WAIT_TIMEOUT_MS, OUTCOME_RESERVE_MS } from '../../functions/domain/webhooks/wait-budget.js';
import { FUNCTIONS } from '../../functions/manifest.js';
import { synth } from '../support/synth.js';

describe('wait mode: our 504 comes before API Gateway gives up', () => {
  it('the longest wait a deployment may set leaves the outcome its reserve inside the gateway\'s 30 s', () => {
    expect(MAX_WAIT_TIMEOUT_MS + OUTCOME_RESERVE_MS).toBeLessThanOrEqual(API_GATEWAY_INTEGRATION_TIMEOUT_MS);
    expect(() => synth({ waitTimeoutMs: String(MAX_WAIT_TIMEOUT_MS) })).not.toThrow();
    expect(() => synth({ waitTimeoutMs: String(MAX_WAIT_TIMEOUT_MS + 1) })).toThrow(/context waitTimeoutMs must be a whole number from 1 to 28000/);
  });

  it('the webhook function stops before the gateway, and the gateway waits its full 30 s for it', () => {
    const { stack, template } = synth();
    const webhook = template.toJSON().Resources[stack.getLogicalId(stack.functions.webhook.function.node.defaultChild as never)];
    expect(webhook.Properties.Timeout).toBe(FUNCTIONS.webhook.timeoutSeconds);
    expect(FUNCTIONS.webhook.timeoutSeconds * 1000).toBeLessThan(API_GATEWAY_INTEGRATION_TIMEOUT_MS);
    for (const integration of Object.values(template.findResources('AWS::ApiGatewayV2::Integration'))) {
      // Unset means 30,000 ms for HTTP APIs; a shorter one would undercut the derived bound.
      expect(integration.Properties.TimeoutInMillis ?? API_GATEWAY_INTEGRATION_TIMEOUT_MS).toBe(API_GATEWAY_INTEGRATION_TIMEOUT_MS);
    }
  });
});

describe('webhook body limit: what the gateway hands Lambda always fits one invocation', () => {
  it('the largest allowed body, at its worst-case growth in the event, fits 6 MB with the envelope', () => {
    expect(MAX_WEBHOOK_BODY_BYTES * EVENT_BODY_EXPANSION + EVENT_ENVELOPE_RESERVE_BYTES).toBeLessThanOrEqual(LAMBDA_INVOCATION_PAYLOAD_BYTES);
    expect(MAX_WEBHOOK_BODY_BYTES).toBe(1_037_653);
  });

  it('synth accepts the derived maximum and refuses one byte more', () => {
    const { template } = synth({ webhookMaxBodyBytes: String(MAX_WEBHOOK_BODY_BYTES) });
    const environments = Object.values(template.findResources('AWS::Lambda::Function')).map((f) => f.Properties.Environment?.Variables ?? {});
    expect(environments.filter((env) => env.WEBHOOK_MAX_BODY_BYTES === String(MAX_WEBHOOK_BODY_BYTES))).toHaveLength(1);
    expect(() => synth({ webhookMaxBodyBytes: String(MAX_WEBHOOK_BODY_BYTES + 1) })).toThrow(/context webhookMaxBodyBytes must be a whole number from 1 to 1037653/);
  });
});
