import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a flow's role may do besides logging and tracing: `flows/<name>.permissions.json`. */
export interface FlowPermission {
  actions: string[];
  resources: string[];
  /** Required, with `reason`, for a resource containing `*`. */
  allowWildcardResource?: boolean;
  /** Why a wildcard resource is needed; shown to cdk-nag and reviewers. */
  reason?: string;
}

export const FLOW_PERMISSIONS_SUFFIX = '.permissions.json';
/** `service:Action`, as IAM writes an action; no wildcard. */
const ACTION = /^[a-z0-9-]+:[A-Za-z0-9]+$/;

/**
 * Reads and checks a flow's permissions file, if it has one: a JSON list of
 * `{"actions": [...], "resources": [...]}`. No action may contain `*` (name each action the flow
 * calls); a resource containing `*` needs `"allowWildcardResource": true` and a `reason`.
 *
 * @returns the statements, or `[]` when the flow has no permissions file.
 * @throws Error naming the file and the entry at fault.
 */
export function readFlowPermissions(flowsDir: string, flowName: string): FlowPermission[] {
  const file = join(flowsDir, flowName + FLOW_PERMISSIONS_SUFFIX);
  if (!existsSync(file)) return [];
  let list: unknown;
  try {
    list = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`flow permissions ${file} is not JSON: ${(error as Error).message}`);
  }
  return checkFlowPermissions(file, list);
}

/** See {@link readFlowPermissions}; `file` names the source in errors. */
export function checkFlowPermissions(file: string, list: unknown): FlowPermission[] {
  if (!Array.isArray(list)) throw new Error(`flow permissions ${file} must be a JSON list of {"actions": [...], "resources": [...]}`);
  const isTextList = (value: unknown): value is string[] =>
    Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string' && item !== '');
  return list.map((entry: unknown, index) => {
    const at = `flow permissions ${file}, entry ${index + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error(`${at}: must be an object {"actions": [...], "resources": [...]}`);
    const { actions, resources, allowWildcardResource, reason, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw new Error(`${at}: unknown field(s) ${unknown.join(', ')} (allowed: actions, resources, allowWildcardResource, reason)`);
    if (!isTextList(actions)) throw new Error(`${at}: "actions" must be a non-empty list of IAM actions such as "dynamodb:PutItem"`);
    if (!isTextList(resources)) throw new Error(`${at}: "resources" must be a non-empty list of ARNs`);
    for (const action of actions) {
      if (action.includes('*')) throw new Error(`${at}: action "${action}" has a "*"; name each action the flow calls`);
      if (!ACTION.test(action)) throw new Error(`${at}: "${action}" is not an IAM action (service:Action)`);
    }
    if (allowWildcardResource !== undefined && typeof allowWildcardResource !== 'boolean') throw new Error(`${at}: "allowWildcardResource" must be true or false`);
    if (reason !== undefined && typeof reason !== 'string') throw new Error(`${at}: "reason" must be text`);
    const wildcards = resources.filter((resource) => resource.includes('*'));
    if (wildcards.length > 0 && (allowWildcardResource !== true || !reason?.trim())) {
      throw new Error(`${at}: resource "${wildcards[0]}" has a "*": name the resources, or set "allowWildcardResource": true with a "reason"`);
    }
    return { actions, resources, ...(allowWildcardResource !== undefined && { allowWildcardResource }), ...(reason !== undefined && { reason }) };
  });
}
