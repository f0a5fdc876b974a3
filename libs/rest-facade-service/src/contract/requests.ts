import { z } from '@trading/config';
import { DECIMAL_SYNTAX } from '@trading/money';
import { named, ORDER_CLASSES, ORDER_SIDES, ORDER_TYPES, TIMES_IN_FORCE } from './kit';

/** What the facade accepts as request bodies: checked here (each failure a 400 naming the field), documented from the same schemas. */
const required = { error: 'is required' };
const uuid = z.string(required).uuid('must be a UUID');
const DECIMAL_ERROR = 'must be a decimal string, e.g. "100.00"';
/** The GraphQL `Decimal` scalar's syntax; whether the value is allowed (sign, decimals, size) the service decides. */
const decimalString = z.string({ error: DECIMAL_ERROR }).regex(DECIMAL_SYNTAX, DECIMAL_ERROR);

export const fundingRequest = named(
  'FundingRequest',
  z.object({
    accountId: uuid,
    amount: decimalString.meta({
      description: "Positive, with at most the currency's minor units (2 for USD, 0 for JPY)",
      examples: ['100.00'],
    }),
    currency: z.string(required).meta({ description: 'ISO 4217', examples: ['USD'] }),
    reference: z.string().max(140, 'must be at most 140 characters').optional(),
    sandboxOutcome: z
      .enum(['COMPLETED', 'REJECTED'])
      .optional()
      .meta({ description: 'Sandbox only: force the simulated clearing outcome' }),
  }),
);

export const accountSettingsRequest = named(
  'AccountSettingsRequest',
  z.strictObject({
    nickname: z
      .string({ error: 'must be a string, or null to clear it' })
      .nullable()
      .optional()
      .meta({ description: '1 to 64 characters once trimmed, no control characters; null clears it', examples: ['Retirement'] }),
    tradeConfirmationEmails: z.boolean({ error: 'must be true or false' }).optional().meta({
      description: 'Whether each fill is confirmed by email',
    }),
  }),
  'What to change (at least one field; a field left out keeps its value, an unknown one is refused)',
);

export const cancelFundingRequest = named('CancelFundingRequest', z.object({ transactionId: uuid }));

export const orderRequest = named(
  'OrderRequest',
  z.object({
    accountId: uuid,
    symbol: z.string(required).meta({ examples: ['AAPL'] }),
    side: z.enum(ORDER_SIDES, { error: 'must be BUY or SELL' }),
    type: z.enum(ORDER_TYPES, { error: 'must be MARKET, LIMIT, STOP, STOP_LIMIT or TRAILING_STOP' }),
    timeInForce: z
      .enum(TIMES_IN_FORCE, { error: 'must be DAY, GTC, IOC or FOK' })
      .meta({ description: 'MARKET: DAY, IOC, FOK. LIMIT: all. STOP, STOP_LIMIT and TRAILING_STOP: DAY, GTC.' }),
    quantity: decimalString.meta({ description: 'A multiple of the lot size, within the instrument limits', examples: ['10'] }),
    limitPrice: decimalString.optional().meta({ description: 'LIMIT and STOP_LIMIT only; on the tick' }),
    stopPrice: decimalString.optional().meta({ description: 'STOP and STOP_LIMIT only; on the tick' }),
    trailPrice: decimalString
      .optional()
      .meta({ description: 'TRAILING_STOP: the stop trails the best price by this distance (on the tick); or trailPercent' }),
    trailPercent: decimalString.optional().meta({ description: 'TRAILING_STOP: the trail as a percentage, 0 < p < 100; or trailPrice' }),
    clientOrderId: z
      .string()
      .max(64, 'must be at most 64 characters')
      .optional()
      .meta({ description: 'Unique per account; generated when absent' }),
    orderClass: z.enum(ORDER_CLASSES, { error: 'must be SIMPLE, BRACKET, OCO or OTO' }).optional().meta({
      description:
        'SIMPLE (default). BRACKET: this entry plus takeProfit and stopLoss, which start when it fills and cancel each other. OTO: the entry and one of them. OCO: this order (a LIMIT) and its stopLoss leg, working at once and cancelling each other (a partial fill of a sell leg reduces the other to the same remainder). DAY or GTC.',
    }),
    takeProfit: z
      .object({ limitPrice: decimalString })
      .optional()
      .meta({ description: 'BRACKET, OTO: a LIMIT order on the other side, same quantity' }),
    stopLoss: z
      .object({ stopPrice: decimalString, limitPrice: decimalString.optional() })
      .optional()
      .meta({ description: 'BRACKET, OTO: a STOP (STOP_LIMIT with limitPrice) on the other side; OCO: the stop leg, same side' }),
  }),
);

export const replaceOrderRequest = named(
  'ReplaceOrderRequest',
  z.object({
    accountId: uuid,
    orderId: uuid,
    quantity: decimalString
      .optional()
      .meta({ description: 'The new total (fills included); must exceed the filled quantity', examples: ['10'] }),
    limitPrice: decimalString.optional().meta({ description: 'LIMIT and STOP_LIMIT only; on the tick' }),
    stopPrice: decimalString.optional().meta({ description: 'STOP and STOP_LIMIT only; on the tick' }),
    timeInForce: z
      .enum(TIMES_IN_FORCE, { error: 'must be DAY, GTC, IOC or FOK' })
      .optional()
      .meta({ description: "What the type accepts; a leg keeps its group's" }),
    trailPrice: decimalString
      .optional()
      .meta({ description: 'TRAILING_STOP: a new trail as a price distance (on the tick); or trailPercent, not both' }),
    trailPercent: decimalString
      .optional()
      .meta({ description: 'TRAILING_STOP: a new trail as a percentage, 0 < p < 100; or trailPrice, not both' }),
    clientOrderId: z
      .string()
      .max(64, 'must be at most 64 characters')
      .optional()
      .meta({ description: "The replacement's clientOrderId, unique per account as on placing; generated when absent" }),
  }),
  "What a replace changes (at least one of quantity, limitPrice, stopPrice, timeInForce, trailPrice, trailPercent). A pair's leg, buying or selling (an OCO's, or a bracket's take-profit or stop-loss once the entry has filled), is replaced within its pair; an OTO's child, once it works, is replaced as an order of its own; a bracket's or an OTO's entry and legs still waiting for their entry cannot be replaced",
);

export const cancelOrderRequest = named('CancelOrderRequest', z.object({ orderId: z.string(required) }));

/** Proxied to auth, which checks them; documented here. */
export const patLoginRequest = named(
  'PatLoginRequest',
  z.object({ token: z.string().meta({ description: 'The full PAT, `<tokenId>.<secret>`' }) }),
);
export const patRevokeRequest = named(
  'PatRevokeRequest',
  z.object({
    tokenId: z
      .string()
      .regex(/^tpat_[0-9A-Za-z]{16}$/)
      .meta({ examples: ['tpat_0123456789abcdef'] }),
  }),
);
