import { eventSignatureProblem, settlementShapeProblem, type DeliveredEvent, type EventSigners } from '@trading/events';
import { canonical, formatMoney, formatPrice } from '@trading/money';
import { orderUpdate } from '../contract';

/** One event as a client receives it: the stream entry's id, `order` or `fill`, and its data. */
export interface ClientEvent {
  id: string;
  accountId: string;
  event: 'order' | 'fill';
  data: Record<string, unknown>;
}

/**
 * The account an entry says it concerns, read without checking anything: only for passing over
 * other accounts' entries before the costly signature check (a replay or the live feed reads
 * every user's events). Never trusted for more: what is served goes through `clientEventOf`.
 */
export function claimedAccountOf(entry: DeliveredEvent): string | undefined {
  const subject =
    entry.type === 'order.updated' ? entry.payload['order'] : entry.type === 'trade.executed' ? entry.payload['trade'] : undefined;
  const accountId = subject && typeof subject === 'object' ? (subject as Record<string, unknown>)['accountId'] : undefined;
  return typeof accountId === 'string' ? accountId : undefined;
}

/**
 * The settlement stream's entries as clients see them: `order.updated` is an `order` event
 * (the order as GET /oms/{accountId}/order/{orderId} shows it, without fills), `trade.executed`
 * a `fill` event (the trade as the orders list shows it). Only what the OMS signed and the
 * contract accepts is shown; everything else (hold accounting, forgeries) is not a client's.
 */
export function clientEventOf(entry: DeliveredEvent, signers: EventSigners): ClientEvent | null {
  const read = readClientEvent(entry, signers);
  return read && 'event' in read ? read.event : null;
}

/**
 * As `clientEventOf`, saying why a client entry is not shown: `unverified` (with the problem)
 * when its signature does not check out against the keys trusted now (unsigned, forged, or
 * signed with a key since retired or lost with a reset data directory). Null for what is never
 * a client's (other types, a shape the contract refuses).
 */
export function readClientEvent(entry: DeliveredEvent, signers: EventSigners): { event: ClientEvent } | { unverified: string } | null {
  if (entry.type !== 'order.updated' && entry.type !== 'trade.executed') return null;
  const unverified = eventSignatureProblem(entry, signers, 'oms');
  if (unverified) return { unverified };
  if (settlementShapeProblem(entry)) return null;
  return { event: shown(entry) };
}

function shown(entry: DeliveredEvent): ClientEvent {
  if (entry.type === 'order.updated') {
    const order = entry.payload['order'] as Record<string, unknown>;
    // The documented shape, fields in its order (the outbox keeps JSON as jsonb, which reorders keys).
    const documented = orderUpdate.safeParse(order);
    return { id: entry.entryId, accountId: String(order['accountId']), event: 'order', data: documented.success ? documented.data : order };
  }
  const t = entry.payload['trade'] as Record<string, string>;
  const currency = t['currency']!;
  return {
    id: entry.entryId,
    accountId: t['accountId']!,
    event: 'fill',
    data: {
      id: t['id'],
      orderId: t['orderId'],
      accountId: t['accountId'],
      symbol: t['symbol'],
      side: t['side'],
      quantity: canonical(t['quantity']!),
      price: formatPrice(t['price']!, currency),
      currency,
      grossAmount: formatMoney(t['grossAmount']!, currency),
      commission: formatMoney(t['commission']!, currency),
      netAmount: formatMoney(t['netAmount']!, currency),
      executedAt: t['executedAt'],
    },
  };
}
