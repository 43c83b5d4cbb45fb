/**
 * The ids of shared/senders.md, in its order: the 50 senders the catalog must cover (Resend,
 * Clerk and Svix share a row there). `test/domain/senders/catalog.test.ts` checks this list
 * against the file itself where it is beside the repository.
 */
export const SENDERS_MD_IDS: readonly string[] = [
  'stripe', 'github', 'gitlab', 'bitbucket', 'slack', 'discord', 'shopify', 'woocommerce', 'bigcommerce', 'twilio',
  'sendgrid', 'mailgun', 'postmark', 'resend', 'clerk', 'svix', 'paddle', 'lemon_squeezy', 'paypal', 'square',
  'braintree', 'adyen', 'mollie', 'razorpay', 'coinbase_commerce', 'plaid', 'zoom', 'twitch', 'microsoft_graph', 'google_pubsub',
  'aws_sns', 'calendly', 'typeform', 'hubspot', 'intercom', 'linear', 'jira', 'asana', 'notion', 'airtable',
  'vercel', 'netlify', 'sentry', 'pagerduty', 'zendesk', 'docusign', 'okta', 'auth0', 'meta', 'telegram',
  'dropbox', 'x',
];
