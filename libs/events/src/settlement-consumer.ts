import type { Logger } from '@trading/logging';
import type { DeliveredEvent, EventLog } from './event-log';
import { LIVE_EVENT_TYPES, refuseUnlessFromOms } from './settlement-contract';
import type { EventSigners } from './signature';
import { StreamConsumer, type ConsumerOptions } from './stream-consumer';

/**
 * A domain's consumer group on the OMS's settlement stream (banking, accounts). Money and
 * positions move only on what the OMS signed, in the contract's shape: anything else is
 * dead-lettered; clients' live events are read past. `apply` must be idempotent by event id and
 * commit before it resolves: the entry is acked only afterwards.
 */
export function settlementConsumer(
  group: string,
  apply: (event: DeliveredEvent) => Promise<unknown>,
  source: { log: EventLog; stream: string; logger: Logger; signers: EventSigners },
  options: Pick<ConsumerOptions, 'consumer' | 'claimIdleMs' | 'onDeadLetter'> = {},
): StreamConsumer {
  return new StreamConsumer({
    ...options,
    log: source.log,
    stream: source.stream,
    group,
    logger: source.logger,
    refuse: refuseUnlessFromOms(source.signers),
    ignores: LIVE_EVENT_TYPES,
    handle: async (event) => void (await apply(event)),
  });
}
