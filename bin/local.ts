import { delimiter, resolve } from 'node:path';
import { parseCorsOrigins } from '../functions/cors.js';
import { SETTINGS } from '../functions/settings.js';
import { readFlowFunctionSettings } from '../lib/flow-functions.js';
import { startLocalStack } from '../local/stack.js';

/**
 * `npm start`: the local stack on http://127.0.0.1:$PORT with embedded engines. Prints the URLs,
 * a bearer token to try it with, and how to mint more.
 */
const port = Number(process.env.PORT ?? 3000);
const generatedSecret = !process.env.AUTH_JWT_SECRET;
// The handlers' settings a user may give `npm start` (e.g. WAIT_TIMEOUT_MS=8000); the wiring is the stack's own.
const settings = Object.fromEntries(
  Object.values(SETTINGS).filter((s) => s.source.kind !== 'wiring' && process.env[s.env]).map((s) => [s.env, process.env[s.env]]),
);
// The SDK's notice that its 2027 releases need Node 22 says nothing about this run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// And the flow functions' settings (flows/functions/settings.json), e.g. NOTIFY_URL=http://... npm start.
for (const dir of (process.env.FLOWS_DIR ?? resolve(import.meta.dirname, '../flows')).split(delimiter)) {
  for (const variable of Object.keys(readFlowFunctionSettings(dir))) if (process.env[variable]) settings[variable] = process.env[variable];
}
let corsAllowedOrigins: string[];
try {
  corsAllowedOrigins = parseCorsOrigins(process.env.CORS_ALLOWED_ORIGINS, 'CORS_ALLOWED_ORIGINS');
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const stack = await startLocalStack({ port, flowsDir: process.env.FLOWS_DIR, jwtSecret: process.env.AUTH_JWT_SECRET, env: settings, corsAllowedOrigins }).catch((error: NodeJS.ErrnoException) => {
  console.error(error.code === 'EADDRINUSE' ? `Port ${port} is in use on 127.0.0.1; start with another, e.g. PORT=3001 npm start` : error);
  process.exit(1);
});
const token = await stack.token('local-user');

console.log(`Local stack ready (embedded DynamoDB, SQS and Step Functions; data lives as long as this process).

  Console:           ${stack.baseUrl}/console#token=${token}
                     (signs you in as "local-user"; the token stays in the link's fragment, never sent to the server)

  Gateway base URL:  ${stack.baseUrl}
  Webhook base URL:  ${stack.webhookBaseUrl}
  Health:            ${stack.baseUrl}/health
  OpenAPI:           ${stack.baseUrl}/openapi.json
${generatedSecret ? `  AUTH_JWT_SECRET:   ${stack.jwtSecret}   (generated for this run; set AUTH_JWT_SECRET to keep one)\n` : ''}
  Bearer token (sub "local-user", valid 1 hour):
    ${token}

  Try:   curl -H "Authorization: Bearer <token>" -X POST ${stack.baseUrl}/api-keys
  Mint:  AUTH_JWT_SECRET=${generatedSecret ? stack.jwtSecret : '<your secret>'} npm run token -- <sub> [account_id]
`);

const shutdown = async () => {
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
