import { AppError } from '../../shared/errors.js';
import { logFault } from '../../shared/logger.js';
import type { Clock } from '../clock.js';
import type { ClientInfo, MfaEvent, MfaEventLog, MfaEventType } from './ports.js';

export interface AuditDeps {
  events: MfaEventLog;
  now: Clock;
}

/** Records one event of `subject`: the time, the factor, where the request came from; never a code or secret. */
export function recordEvent(
  deps: AuditDeps,
  subject: string,
  event: { type: MfaEventType; client: ClientInfo; factorId?: string; actor?: string },
): Promise<void> {
  const record: MfaEvent = {
    type: event.type,
    at: new Date(deps.now()).toISOString(),
    ...(event.factorId !== undefined && { factorId: event.factorId }),
    ...(event.client.sourceIp !== undefined && { sourceIp: event.client.sourceIp }),
    // A header is the caller's text: bounded, so an event stays small however long it was sent.
    ...(event.client.userAgent !== undefined && { userAgent: event.client.userAgent.slice(0, 256) }),
    ...(event.actor !== undefined && { actor: event.actor }),
  };
  return deps.events.record(subject, record);
}

/**
 * Runs a code check and records how it ended: `succeeded` with its result, `failed` for a wrong
 * code, `locked_out` for a refusal by the attempt budget; anything else is not an outcome of the
 * check (a 409, a fault) and records nothing.
 */
export async function audited<T>(
  deps: AuditDeps,
  input: { subject: string; client: ClientInfo; succeeded?: (result: T) => { type: MfaEventType; factorId?: string }; failed: MfaEventType; factorId?: string },
  run: () => Promise<T>,
): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (error) {
    const type = error instanceof AppError && (error.code === 'too_many_attempts' ? 'locked_out'
      : error.code === 'invalid_code' || error.code === 'mfa_required' ? input.failed : undefined);
    if (type) await recordEvent(deps, input.subject, { type, client: input.client, factorId: input.factorId });
    throw error;
  }
  const success = input.succeeded?.(result);
  // The operation has happened (a code spent, a factor stored): failing the request now would lose
  // what the user is owed (the proof, the recovery codes shown once). The fault is logged instead.
  if (success) await recordEvent(deps, input.subject, { ...success, client: input.client }).catch((error: unknown) => logFault(`MFA event ${success.type} not recorded`, error));
  return result;
}

/** A page of the user's own events, newest first. */
export const listEvents = (deps: Pick<AuditDeps, 'events'>, input: { subject: string; limit: number; cursor?: string }) =>
  deps.events.list(input.subject, { limit: input.limit, cursor: input.cursor });
