import { createHash } from 'node:crypto';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { encodeMaintenanceJob } from '../../domain/search/maintenance.js';
import type { IndexRef, MaintenanceJob, SearchMaintenance } from '../../domain/search/types.js';
import type { Clock } from '../../domain/clock.js';
import { AppError } from '../../shared/errors.js';

/** One index as SQS names it: its account (hashed: an account id may hold characters a group id cannot) and its name. */
export const maintenanceGroupOf = (ref: IndexRef): string => `${createHash('sha256').update(ref.accountId).digest('hex').slice(0, 32)}.${ref.name}`;

/**
 * The `searchMaintenance` queue (FIFO). Each index is a message group, so its jobs run one at a
 * time, in order. A job's deduplication id names its index, kind, generation and window of
 * `windowSeconds`: SQS drops every other job with that id for five minutes, so an index gets at
 * most one job of a kind per window however many writes it takes: that is the debounce. The queue
 * delays each message by the window (its `DelaySeconds`), so the job of a window runs after the
 * window has ended, after every write that it stands for.
 *
 * A message SQS did not accept is `unavailable` (503); the write before it is committed and is
 * found by queries already, and sending it again (a retried write) schedules the job.
 */
export class SqsSearchMaintenance implements SearchMaintenance {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
    private readonly options: { windowSeconds: number; now: Clock },
  ) {}

  async schedule(job: MaintenanceJob): Promise<void> {
    const group = maintenanceGroupOf(job);
    const window = Math.floor(this.options.now() / (this.options.windowSeconds * 1000));
    const deduplication = createHash('sha256').update(`${group}\n${job.kind}\n${job.generation}\n${window}`).digest('hex');
    try {
      await this.client.send(new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: encodeMaintenanceJob(job),
        MessageGroupId: group,
        MessageDeduplicationId: deduplication,
      }));
    } catch (error) {
      throw new AppError('unavailable', `search maintenance not scheduled: ${error instanceof Error ? error.name : 'unknown error'}`);
    }
  }
}
