import { StreamConsumer, type ConsumerOptions, type EventLog } from '@trading/events';
import type { Logger } from '@trading/logging';
import type { PositionSettlementService } from './settlement.service';

/** Accounts' consumer group on the OMS's settlement stream: apply fills (idempotently, committed), then ack. */
export function settlementConsumer(
  settlement: PositionSettlementService,
  events: EventLog,
  stream: string,
  logger: Logger,
  options: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs'> = {},
): StreamConsumer {
  return new StreamConsumer({ ...options, log: events, stream, group: 'accounts', logger, handle: async (event) => void (await settlement.apply(event)) });
}
