import {
  LIVE_EVENT_TYPES,
  refuseUnlessFromOms,
  StreamConsumer,
  type ConsumerOptions,
  type EventLog,
  type EventSigners,
} from '@trading/events';
import type { Logger } from '@trading/logging';
import type { PositionSettlementService } from './settlement.service';

/** Accounts' consumer group on the OMS's settlement stream: apply fills (idempotently, committed), then ack. */
export function settlementConsumer(
  settlement: PositionSettlementService,
  events: EventLog,
  stream: string,
  logger: Logger,
  signers: EventSigners,
  options: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs' | 'onDeadLetter'> = {},
): StreamConsumer {
  // Positions move only on what the OMS signed, in the contract's shape; anything else is dead-lettered.
  return new StreamConsumer({
    ...options,
    log: events,
    stream,
    group: 'accounts',
    logger,
    refuse: refuseUnlessFromOms(signers),
    ignores: LIVE_EVENT_TYPES,
    handle: async (event) => void (await settlement.apply(event)),
  });
}
