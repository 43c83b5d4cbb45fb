/**
 * An execution's id: its received time in epoch milliseconds, base 36 in 9 characters (until the
 * year 5188), then a random part. The time prefix lets a record be found from its id alone (the
 * store's sort key is the received time) and makes ids sort as the deliveries arrived.
 */
export const EXECUTION_ID = /^[0-9a-z]{9}[0-9A-Za-z_-]{1,64}$/;

const TIME_CHARS = 9;

export const newExecutionId = (receivedAtMs: number, random: string): string =>
  receivedAtMs.toString(36).padStart(TIME_CHARS, '0') + random;

/** The received time an id was made with (ISO 8601, as records store it). */
export const receivedAtOf = (executionId: string): string =>
  new Date(Number.parseInt(executionId.slice(0, TIME_CHARS), 36)).toISOString();
