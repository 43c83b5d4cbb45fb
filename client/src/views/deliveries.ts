import type { BodyOf, DataOf, QueryOf, Transport } from '../http.js';
import { paginate, type ListOptions } from '../paging.js';
import type { Delivery, DeliveryDetail, Replay } from '../types.js';

/** The filters of a trigger's deliveries (`listTriggerExecutions`), without paging. */
export type DeliveryFilters = Omit<NonNullable<QueryOf<'listTriggerExecutions'>>, 'limit' | 'cursor'>;

/** A trigger's deliveries: what each sender posted, what was answered, what the flow did. */
export class DeliveriesView {
  constructor(private readonly http: Transport) {}

  /** A trigger's deliveries, newest first (`listTriggerExecutions`). */
  list(triggerId: string, filters: DeliveryFilters & ListOptions = {}): AsyncGenerator<Delivery> {
    const { pageSize, signal, ...query } = filters;
    return paginate(async (cursor) => {
      const data = await this.http.data('listTriggerExecutions', { path: { id: triggerId }, query: { ...query, limit: pageSize, cursor }, signal });
      return { items: data.executions, next: data.next_cursor };
    });
  }

  /** One delivery with its request and timeline (`getTriggerExecution`). */
  get(triggerId: string, executionId: string): Promise<DeliveryDetail> {
    return this.http.data('getTriggerExecution', { path: { id: triggerId, execution_id: executionId } });
  }

  /** Runs a delivery's flow again (`replayTriggerExecution`). */
  replay(triggerId: string, executionId: string): Promise<Replay> {
    return this.http.data('replayTriggerExecution', { path: { id: triggerId, execution_id: executionId } });
  }

  /** Replays the deliveries a filter selects, one page per call (`replayTriggerExecutions`). */
  replayMany(triggerId: string, input: BodyOf<'replayTriggerExecutions'>): Promise<DataOf<'replayTriggerExecutions'>> {
    return this.http.data('replayTriggerExecutions', { path: { id: triggerId }, json: input });
  }
}
