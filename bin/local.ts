import { delimiter, resolve } from 'node:path';
import { parseCorsOrigins } from '../functions/cors.js';
import { SETTINGS } from '../functions/settings.js';
import { readFlowFunctionSettings } from '../lib/flow-functions.js';
import { DataDirError, dataDirFrom, openDataDir } from '../local/data-dir.js';
import { formatRequestLine } from '../local/request-log.js';

/**
 * `npm start`: the local stack on http://127.0.0.1:$PORT with embedded engines, its data kept in
 * a data directory (`.flowgate/`, `FLOWGATE_DATA_DIR` for another, `:memory:` for none). Prints
 * the URLs, where the data is, a bearer token to try it with, and how to mint more; then a line
 * per request. `FLOWGATE_METRICS=stdout` also prints the functions' metric lines, as Lambda
 * writes them for CloudWatch.
 */
const port = Number(process.env.PORT ?? 3000);
/** `flowgate listen`'s WebSocket endpoint: the next port by default, where `flowgate login --local` looks. */
const listenPort = Number(process.env.LISTEN_PORT ?? port + 1);
/** The receiver's function URL, where trigger URLs point: the port after that by default, the same at each start, so trigger URLs given out stay good. */
const webhookPort = Number(process.env.WEBHOOK_PORT ?? port + 2);
const generatedSecret = !process.env.AUTH_JWT_SECRET;
const dataDir = dataDirFrom(process.env.FLOWGATE_DATA_DIR, process.cwd());
/** How long a stop waits for flows under way; what it does not wait for is queued again at the next start. */
const STOP_GRACE_MS = 5_000;
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
const METRICS_TARGETS = { stdout: 'stdout', off: 'none', '': 'none' } as const;
const metricsTarget = METRICS_TARGETS[(process.env.FLOWGATE_METRICS ?? '') as keyof typeof METRICS_TARGETS];
if (!Object.hasOwn(METRICS_TARGETS, process.env.FLOWGATE_METRICS ?? '')) {
  console.error('FLOWGATE_METRICS must be stdout (print the metric lines) or off (the default)');
  process.exit(1);
}
let corsAllowedOrigins: string[];
try {
  corsAllowedOrigins = parseCorsOrigins(process.env.CORS_ALLOWED_ORIGINS, 'CORS_ALLOWED_ORIGINS');
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
// The data directory is checked and locked before the stack's modules load (seconds of CPU): one it
// cannot use is refused at once. The stack owns it from here, and releases it if it cannot start.
const data = dataDir === undefined ? undefined : await openDataDir(dataDir).catch((error: Error) => {
  console.error(error instanceof DataDirError ? error.message : error);
  process.exit(1);
});
const { startLocalStack } = await import('../local/stack.js');
const stack = await startLocalStack({ port, flowsDir: process.env.FLOWS_DIR, jwtSecret: process.env.AUTH_JWT_SECRET, env: settings, corsAllowedOrigins, dataDir: data, metrics: metricsTarget, requestLog: (entry) => console.log(formatRequestLine(entry)), flowWorkerThread: true, engineThread: true, listenPort, webhookPort }).catch((error: NodeJS.ErrnoException) => {
  if (error instanceof DataDirError) console.error(error.message);
  else console.error(error.code === 'EADDRINUSE' ? `Port ${port}, ${listenPort} or ${webhookPort} is in use on 127.0.0.1; start with others, e.g. PORT=3005 LISTEN_PORT=3006 WEBHOOK_PORT=3007 npm start` : error);
  process.exit(1);
});
const token = await stack.token('local-user');
await data?.recordAddress({ base_url: stack.baseUrl, listen_url: stack.listenUrl });

const recovered = stack.data?.recovered;
const migrated = stack.data?.migrated ? `, migrated from layout ${stack.data.migrated.from} to ${stack.data.migrated.to}` : '';
const dataLine = !stack.data
  ? 'in memory (FLOWGATE_DATA_DIR=:memory:): everything is gone when this process stops'
  : stack.data.created
    ? `${stack.data.path} (created)`
    : `${stack.data.path} (reopened${migrated}${recovered && recovered.requeued + recovered.failed + recovered.sweeps + recovered.unacknowledged > 0
      ? `: ${recovered.requeued} unfinished deliveries queued again${recovered.failed ? `, ${recovered.failed} that could not run recorded failed` : ''}${recovered.unacknowledged ? `, ${recovered.unacknowledged} never acknowledged (request not written) removed` : ''}${recovered.sweeps ? `, ${recovered.sweeps} purged generations to sweep` : ''}`
      : ''})`;
const secretNote = stack.data ? `kept in ${stack.data.path}/secrets.json` : 'generated for this run';
// `npm run token` reads the data directory's secret itself (FLOWGATE_DATA_DIR names it, as here); a secret of one's own, or none kept, must be given.
const shellWord = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);
const dataDirVar = process.env.FLOWGATE_DATA_DIR ? `FLOWGATE_DATA_DIR=${shellWord(process.env.FLOWGATE_DATA_DIR)} ` : '';
const newToken = !generatedSecret ? 'AUTH_JWT_SECRET=<your secret> npm run token'
  : stack.data ? `${dataDirVar}npm run token`
    : `AUTH_JWT_SECRET=${stack.jwtSecret} npm run token`;

console.log(`Local stack ready (embedded DynamoDB, SQS, S3 and Step Functions).

  Data directory:    ${dataLine}

  Console:           ${stack.baseUrl}/console#token=${token}
                     (signs you in as "local-user"; the token stays in the link's fragment, never sent to the server)

  Gateway base URL:  ${stack.baseUrl}
  Trigger URLs:      ${stack.webhookFunctionUrl}<webhook_id>   (the receiver's function URL; ${stack.webhookBaseUrl}/<webhook_id> too)
  Listen endpoint:   ${stack.listenUrl}   (flowgate listen)
  Health:            ${stack.baseUrl}/health
  OpenAPI:           ${stack.baseUrl}/openapi.json
${generatedSecret ? `  AUTH_JWT_SECRET:   ${stack.jwtSecret}   (${secretNote}; set AUTH_JWT_SECRET to use your own)\n` : ''}
  Bearer token (sub "local-user", valid 1 hour):
    ${token}

  New token, when this one expires:  ${newToken}
  For another user or an admin:      ${newToken} -- <sub> [account_id] [--admin]

  Try:   curl -H "Authorization: Bearer <token>" -X POST ${stack.baseUrl}/api-keys

  Requests are logged below: method, path, status, milliseconds (FLOWGATE_METRICS=stdout adds the metric lines).
`);

let stopping = false;
const shutdown = async () => {
  // A second signal does not wait.
  if (stopping) process.exit(0);
  stopping = true;
  await Promise.race([stack.stop(), new Promise((done) => setTimeout(done, STOP_GRACE_MS).unref())]);
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
