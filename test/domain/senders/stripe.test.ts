import Stripe from 'stripe';
import { JSON_BODY, proveHmacSender } from '../../support/sender-proof.js';

// Signed by stripe-node's own `generateTestHeaderString`, checked by its `constructEvent`.
const stripe = new Stripe('sk_test_proof');

proveHmacSender('stripe', {
  secret: 'whsec_proof_one',
  otherSecret: 'whsec_proof_two',
  sign: (secret, now) => ({
    body: JSON_BODY,
    headers: { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload: JSON_BODY, secret, timestamp: now }) },
  }),
  official: (sent, secret, now) =>
    Boolean(stripe.webhooks.constructEvent(sent.body, sent.headers['Stripe-Signature']!, secret, 300, undefined, now)),
});
