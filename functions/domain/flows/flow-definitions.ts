/**
 * Where `GET /flows/{name}` finds a flow's definition: the Amazon States Language object its
 * `<name>.asl.json` file holds, as the state machine was created from it (a function the flow calls
 * is still named by its placeholder, `"${Function.<name>}"`, not by the ARN CloudFormation fills in).
 * Flows are not secret: they are in the repository.
 */
export type FlowDefinitionSource = (name: string) => Promise<Record<string, unknown> | undefined>;

/**
 * The file the bundling writes beside the code of a function that reads flow names (the triggers
 * function), holding every deployed flow's definition by name. Bundled rather than put in the
 * environment: Lambda allows 4 KB of variables in all, and one definition alone can be larger.
 */
export const FLOW_DEFINITIONS_FILE = 'flow-definitions.json';
