import { z } from '@trading/config';
import { UUID_PATTERN } from '@trading/errors';
import type { DeliveredEvent } from './event-log';
import { eventSignatureProblem, type EventSigners } from './signature';

/**
 * The settlement stream's contract: what the OMS publishes and banking and accounts apply, and
 * the live events beside it (order changes from the OMS, funding end states from banking).
 * Checked before anything is booked, so a malformed event can neither stall a consumer nor
 * move money: it is refused with the field at fault.
 */
const uuid = z.string().regex(UUID_PATTERN, 'must be a UUID');
/** numeric(20,8): at most 12 integer digits and 8 decimals, plain notation. */
const amount = z.string().regex(/^\d{1,12}(\.\d{1,8})?$/, 'must be a non-negative decimal with at most 12 integer digits and 8 decimals');
const positive = amount.refine((v) => !/^0+(\.0+)?$/.test(v), 'must be greater than zero');
const currency = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code');
const side = z.enum(['BUY', 'SELL']);
const envelope = { eventId: uuid, occurredAt: z.string().datetime({ offset: true }) };

const SETTLEMENT_EVENTS = {
  'trade.executed': z.object({
    ...envelope,
    type: z.literal('trade.executed'),
    trade: z.object({
      id: uuid,
      orderId: uuid,
      accountId: uuid,
      symbol: z.string().regex(/^[A-Z0-9.]{1,12}$/, 'must be a symbol'),
      side,
      quantity: positive,
      price: positive,
      currency,
      grossAmount: amount,
      commission: amount,
      netAmount: z.string().regex(/^-?\d{1,12}(\.\d{1,8})?$/, 'must be a decimal'),
      executedAt: z.string().datetime({ offset: true }),
    }),
  }),
  'order.closed': z.object({
    ...envelope,
    type: z.literal('order.closed'),
    order: z.object({
      id: uuid,
      accountId: uuid,
      side,
      status: z.enum(['FILLED', 'CANCELLED', 'EXPIRED', 'REJECTED']),
      currency,
      holdAmount: amount,
      filledQuantity: amount,
      settledAmount: amount,
    }),
  }),
  /**
   * A working buy brought down to a smaller quantity (an OCO's or a bracket's buy leg, when its
   * sibling part-filled): `holdAmount` is what its remainder can still cost, `settledAmount` what
   * its fills so far cost, so banking can shrink the hold to their sum.
   */
  'order.reduced': z.object({
    ...envelope,
    type: z.literal('order.reduced'),
    order: z.object({
      id: uuid,
      accountId: uuid,
      side: z.literal('BUY'),
      currency,
      quantity: positive,
      filledQuantity: amount,
      settledAmount: amount,
      holdAmount: amount,
    }),
  }),
  /**
   * Every state change of an order (for clients' live order events and webhooks; nothing is booked
   * on it). `userId` is who placed it (null for orders no user placed), beside the order: the order
   * clients see never carries it.
   */
  'order.updated': z.object({
    ...envelope,
    type: z.literal('order.updated'),
    order: z.looseObject({
      id: uuid,
      accountId: uuid,
      status: z.enum(['NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'EXPIRED', 'REJECTED']),
      updatedAt: z.string().datetime({ offset: true }),
    }),
    userId: uuid.nullable().optional(),
  }),
  /**
   * A deposit or withdrawal that reached its end state, as the funding API shows it, and who asked
   * for it (null for deposits no user made, such as seeded opening cash). Banking publishes it,
   * signed with its own key; nothing is booked on it.
   */
  'funding.updated': z.object({
    ...envelope,
    type: z.literal('funding.updated'),
    transaction: z.looseObject({
      id: uuid,
      accountId: uuid,
      type: z.enum(['DEPOSIT', 'WITHDRAWAL']),
      state: z.enum(['PENDING', 'COMPLETED', 'CANCELLED', 'REJECTED']),
      amount,
      currency,
    }),
    userId: uuid.nullable().optional(),
  }),
} as const;

/** A fill as the OMS publishes it, once `settlementShapeProblem` has passed it: what banking books and accounts applies to positions. */
export type TradeExecuted = z.infer<(typeof SETTLEMENT_EVENTS)['trade.executed']>;
/** An order's end: banking releases what its hold no longer needs. */
export type OrderClosed = z.infer<(typeof SETTLEMENT_EVENTS)['order.closed']>;
/** A working buy's quantity brought down: banking gives back what its hold no longer needs. */
export type OrderReduced = z.infer<(typeof SETTLEMENT_EVENTS)['order.reduced']>;

/**
 * Types on the stream for clients' live events and webhooks only: no settlement consumer group
 * books anything from them, so they are acked unread, whoever signed them (banking signs
 * `funding.updated`, which banking's and accounts' groups would otherwise refuse as not the OMS's).
 */
export const LIVE_EVENT_TYPES: readonly string[] = ['order.updated', 'funding.updated'];

/** Null for an event shaped as the contract says; otherwise the first problem, naming the field. */
export function settlementShapeProblem(event: DeliveredEvent): string | null {
  const schema = SETTLEMENT_EVENTS[event.type as keyof typeof SETTLEMENT_EVENTS];
  if (!schema) return `unknown event type ${JSON.stringify(event.type).slice(0, 40)}`;
  if (event.payload['eventId'] !== event.eventId) return 'payload.eventId differs from the entry';
  const parsed = schema.safeParse(event.payload);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0]!;
  return `${issue.path.join('.') || 'payload'} ${issue.message}`;
}

/** What a settlement consumer refuses: anything the OMS did not sign, or not shaped as the contract says. */
export function refuseUnlessFromOms(signers: EventSigners): (event: DeliveredEvent) => string | null {
  return (event) => eventSignatureProblem(event, signers, 'oms') ?? settlementShapeProblem(event);
}
