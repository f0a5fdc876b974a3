import {
  LIVE_EVENT_TYPES,
  refuseUnlessFromOms,
  StreamConsumer,
  type ConsumerOptions,
  type EventLog,
  type EventSigners,
} from '@trading/events';
import type { Logger } from '@trading/logging';
import type { SettlementService } from './settlement.service';

/** Banking's consumer group on the OMS's settlement stream: apply (idempotently, committed), then ack. */
export function settlementConsumer(
  settlement: SettlementService,
  events: EventLog,
  stream: string,
  logger: Logger,
  signers: EventSigners,
  options: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs' | 'onDeadLetter'> = {},
): StreamConsumer {
  return new StreamConsumer({
    ...options,
    log: events,
    stream,
    group: 'banking',
    logger,
    // Money moves only on what the OMS signed, in the contract's shape; anything else is dead-lettered.
    refuse: refuseUnlessFromOms(signers),
    ignores: LIVE_EVENT_TYPES,
    handle: async (event) => {
      if (event.type === 'trade.executed' || event.type === 'order.closed') await settlement.apply(event);
    },
  });
}
