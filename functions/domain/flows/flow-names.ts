/** The deployed flows, from `FLOW_NAMES` (set by the CDK stack and the local stack from flows/). */
export const flowNamesFromEnv = (env: NodeJS.ProcessEnv = process.env): ReadonlySet<string> =>
  new Set((env.FLOW_NAMES ?? '').split(',').map((n) => n.trim()).filter(Boolean));
