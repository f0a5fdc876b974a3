import { StreamConsumer, type EventLog } from '@trading/events';
import type { Logger } from '@trading/logging';
import type { SettlementService } from './settlement.service';

/** Banking's consumer group on the OMS's settlement stream: apply (idempotently, committed), then ack. */
export function settlementConsumer(settlement: SettlementService, events: EventLog, stream: string, logger: Logger): StreamConsumer {
  return new StreamConsumer({
    log: events,
    stream,
    group: 'banking',
    logger,
    handle: async (event) => {
      if (event.type === 'trade.executed' || event.type === 'order.closed') await settlement.apply(event);
    },
  });
}
