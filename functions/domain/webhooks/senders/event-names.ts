/**
 * Event names to pick a filter from, by sender. They are kept apart from the catalog's rows so the
 * webhook receiver, which imports every row, never carries them: only the listing
 * (`GET /signature-services`, loaded on its first request) imports this module.
 *
 * A sender whose well-kept package publishes its event names is read from that package, by
 * `npm run docs:event-names` into `event-names.generated.ts` (a test regenerates and compares, so
 * the list follows the package's version); the others have the names their documentation shows
 * (shared/sender-events.md). No list is typed twice.
 */
import type { ListedEventNames } from './listing-types.js';
import { PACKAGED_EVENT_NAMES } from './event-names.generated.js';
import { TELEGRAM_UPDATE_TYPES } from './catalog.js';

/** A type a package exports whose values are the sender's event names: a union of string literals, or an enum's. */
export interface PackagedNames {
  package: string;
  /** The import that names the type, and the type itself (a union of string literals, or a template of an enum). */
  import: string;
  type: string;
}

/** The senders whose package lists their event names, as their deliveries write them (`$.trigger.type`). */
export const PACKAGED_EVENT_NAME_SOURCES: Readonly<Record<string, PackagedNames>> = {
  // X-GitHub-Event's values: the keys of the payload map.
  github: { package: '@octokit/webhooks-types', import: "import type { WebhookEventName } from '@octokit/webhooks-types';", type: 'WebhookEventName' },
  stripe: { package: 'stripe', import: "import type Stripe from 'stripe';", type: 'Stripe.Event.Type' },
  paddle: { package: '@paddle/paddle-node-sdk', import: "import type { EventName } from '@paddle/paddle-node-sdk';", type: '`${EventName}`' },
};

/** The names the other senders' documentation shows, as shared/sender-events.md quotes them with its sources. */
const DOCUMENTED_EVENT_NAMES: Readonly<Record<string, readonly string[]>> = {
  gitlab: ['Push Hook'],
  bitbucket: ['repo:push', 'repo:refs_changed'],
  slack: ['app_mention', 'url_verification'],
  discord: ['APPLICATION_AUTHORIZED'],
  shopify: ['orders/create'],
  woocommerce: ['order.created'],
  bigcommerce: ['store/order/statusUpdated'],
  sendgrid: ['delivered', 'open', 'bounce'],
  mailgun: ['delivered'],
  postmark: ['Delivery', 'Bounce', 'SpamComplaint', 'Open', 'Click', 'SubscriptionChange'],
  resend: ['email.sent'],
  clerk: ['user.created'],
  svix: ['user.created'],
  lemon_squeezy: ['order_created'],
  paypal: ['PAYMENT.CAPTURE.COMPLETED'],
  square: ['payment.updated'],
  braintree: ['subscription_charged_successfully'],
  adyen: ['AUTHORISATION'],
  razorpay: ['payment.captured'],
  coinbase_commerce: ['charge:confirmed'],
  plaid: ['TRANSACTIONS'],
  zoom: ['meeting.started'],
  twitch: ['channel.follow'],
  microsoft_graph: ['created', 'updated', 'deleted', 'reauthorizationRequired'],
  calendly: ['invitee.created', 'invitee.canceled'],
  typeform: ['form_response', 'form_response_partial'],
  hubspot: ['contact.creation', 'contact.propertyChange'],
  intercom: ['conversation.user.created', 'ping'],
  linear: ['Issue', 'Comment'],
  jira: ['jira:issue_updated'],
  asana: ['changed', 'added'],
  notion: ['page.created', 'page.properties_updated'],
  vercel: ['deployment.created'],
  sentry: ['issue', 'event_alert', 'installation'],
  pagerduty: ['incident.triggered'],
  zendesk: ['zen:event-type:user.created'],
  docusign: ['envelope-completed'],
  okta: ['user.session.start'],
  auth0: ['s', 'f'],
  // A change's `field` (each element of a split POST), and the whole POST's `object`.
  meta: ['messages', 'feed', 'page', 'whatsapp_business_account', 'instagram'],
  // The Update's optional fields, as its catalog row reads them.
  telegram: TELEGRAM_UPDATE_TYPES,
  x: ['tweet_create_events', 'favorite_events', 'follow_events', 'direct_message_events'],
  standard_webhooks: ['contact.created'],
};

/** A sender's event names and where they come from; `null` when neither a package nor its documentation gives any. */
export function eventNamesOf(senderId: string): ListedEventNames | null {
  const packaged = PACKAGED_EVENT_NAME_SOURCES[senderId];
  const names = packaged ? PACKAGED_EVENT_NAMES[senderId] : DOCUMENTED_EVENT_NAMES[senderId];
  if (!names) return null;
  return { names: [...names], source: packaged ? `${packaged.package} (${packaged.type.replace(/[`${}]/g, '')})` : 'the sender\'s documentation (examples)' };
}

/** Every sender id this module names, for the test that each is a catalog row. */
export const SENDERS_WITH_EVENT_NAMES: readonly string[] = [...Object.keys(PACKAGED_EVENT_NAME_SOURCES), ...Object.keys(DOCUMENTED_EVENT_NAMES)];
