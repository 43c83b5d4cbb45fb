/**
 * What a flow may be called: the trigger API's `flow` field, the `<name>.asl.json` file that
 * defines it (checked at synth) and the tail of its state machine's name and ARN.
 */
export const FLOW_NAME = /^[A-Za-z0-9_-]{1,64}$/;
