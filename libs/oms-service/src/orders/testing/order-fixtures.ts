import { AppError } from '@trading/errors';
import type { Instrument } from '../../instruments/entities/instrument.entity';
import type { ReplaceRequest } from '../order-rules';
import type { OrderRow } from '../order-store';

// Test-only: what the order rules' specs build their cases from, and how they read a refusal.
export const ACCOUNT = '00000000-0000-4000-8000-000000000001';

/** A placing request's fields: a DAY buy of 10 AAPL at a limit, with what the case changes. */
export const order = (over: Record<string, unknown> = {}) => ({
  accountId: ACCOUNT,
  symbol: 'AAPL',
  side: 'BUY',
  type: 'LIMIT',
  timeInForce: 'DAY',
  quantity: '10',
  limitPrice: '189.50',
  ...over,
});

/** The refusal `run` throws: its code, the field it names and its words. */
export function refusal(run: () => unknown): { code: string; field: string | undefined; message: string } {
  try {
    run();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    // Every refusal says why in words, not only by its code and field.
    expect(err.message.length).toBeGreaterThan(15);
    return { code: err.code, field: err.field, message: err.message };
  }
  throw new Error('expected a refusal, got none');
}

export const instrument = (over: Partial<Instrument> = {}): Instrument =>
  ({
    symbol: 'AAPL',
    name: 'Apple',
    currency: 'USD',
    tickSize: '0.01',
    lotSize: '1',
    lastPrice: '100.00',
    previousClose: '99.00',
    tradable: true,
    minQuantity: '1',
    maxQuantity: '1000',
    ...over,
  }) as Instrument;

/** A working leg of a GTC buy pair (an OCO's, unless the case says otherwise), as a replace finds it. */
export const workingLeg = (over: Partial<OrderRow> = {}): OrderRow =>
  ({
    id: 'leg',
    order_class: 'OCO',
    side: 'BUY',
    status: 'NEW',
    time_in_force: 'GTC',
    oco_group_id: 'pair',
    parent_order_id: null,
    leg: null,
    replaced_by_order_id: null,
    ...over,
  }) as OrderRow;

/** A replace of `leg` at a new limit price, with what the case changes. */
export const replaceRequest = (over: Partial<ReplaceRequest> = {}): ReplaceRequest => ({
  accountId: 'account',
  orderId: 'leg',
  quantity: null,
  limitPrice: '170',
  stopPrice: null,
  timeInForce: null,
  trailPrice: null,
  trailPercent: null,
  clientOrderId: null,
  ...over,
});
