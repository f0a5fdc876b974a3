import Decimal from 'decimal.js';
import type { Claims } from '@trading/auth';
import { marginRulesOf } from '@trading/accounts-directory';
import { AppError } from '@trading/errors';
import { formatMoney, formatPrice } from '@trading/money';
import type { Instrument } from '../instruments/entities/instrument.entity';
import type { CashBalance } from './clients';
import { commissionOn, type CommissionSchedule } from './money';
import { ownedAccount, type OrderDesk } from './order-desk';
import { checkLeg } from './order-legs';
import type { LegRequest } from './classes/legs';
import { parseLegs } from './classes/order-classes';
import { withTrailingStop } from './classes/trailing-stop';
import { checkInstrumentRules, checkPriceBand, parseOrderRequest, type OrderClass, type OrderRequest } from './order-rules';
import { reserve, type Reservation } from './reservation';
import { insufficientPosition, sellable } from './sellable';

/**
 * The what-if of an order: what placing it would trade, cost, hold and change, and why it would
 * be refused, changing nothing. It walks placing's pipeline (parse, rules, reserve) and stops
 * before anything is recorded; refusals come back as reasons, not errors.
 */
export async function whatIfOrder(desk: OrderDesk, claims: Claims, input: Record<string, unknown>, requestId?: string) {
  let request = parseOrderRequest(input);
  const group = parseLegs(input, request);
  const account = await ownedAccount(desk, request.accountId, claims, requestId, request.side === 'SELL' ? request.symbol : undefined);
  const rejectReasons: Refusal[] = [];
  const instrument = await desk.instruments.find(request.symbol);
  if (!instrument) throw new AppError('UNPROCESSABLE', `Unknown symbol ${request.symbol}`, { field: 'symbol' });
  refusing(rejectReasons, () => {
    checkInstrumentRules(request, instrument);
    request = withTrailingStop(request, instrument);
    checkPriceBand(request, instrument, desk.options.priceBand);
  });
  // Each leg on its own rules; the buys among them hold their cash too.
  const legs = group.legs.map((leg) => {
    const reservation = refusing(rejectReasons, () => checkLeg(leg, instrument, desk.options.priceBand, desk.terms));
    return { leg, held: leg.request.side === 'BUY' && reservation ? reservation.holdAmount : new Decimal(0) };
  });
  if (account.status !== 'ACTIVE') rejectReasons.push({ field: 'accountId', message: `The account is ${account.status}` });
  const currency = instrument.currency;
  const r = reserve(request, instrument, desk.terms);
  const cash = estimatedCash(request, r, currency, desk.terms.schedule);
  const balance = await desk.banking.balance(request.accountId, currency, claims);
  const available = new Decimal(balance.availableToTrade);
  const reserved = (cash.buy ? r.holdAmount : new Decimal(0)).plus(legs.reduce((sum, l) => sum.plus(l.held), new Decimal(0)));
  const short = buyingPowerRefusal(reserved, available, currency);
  if (short) rejectReasons.push(short);
  const position = cash.buy
    ? null
    : positionChange(await sellable(desk.dataSource.manager, account, request.symbol), cash.quantity, request.symbol, rejectReasons);
  const warnings = whatIfWarnings(request, r, desk.hours.isOpen(), desk.options.collar);
  return presentWhatIf({
    request,
    instrument,
    accountType: account.type,
    reservation: r,
    cash,
    balance,
    available,
    reserve: reserved,
    position,
    orderClass: group.orderClass,
    legs,
    rejectReasons,
    warnings,
  });
}

/** Why the order would be refused, named by its field. */
export interface Refusal {
  field: string;
  message: string;
}

/** Runs `check`; its AppError is a refusal (a what-if answers reasons, not errors), anything else is thrown. */
function refusing<T>(refusals: Refusal[], check: () => T): T | undefined {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    refusals.push({ field: err.field ?? 'body', message: err.message });
    return undefined;
  }
}

/** What the order would trade and cost at its estimated price; the cash change is out for a buy, in for a sell. */
export interface EstimatedCash {
  buy: boolean;
  quantity: Decimal;
  gross: Decimal;
  commission: Decimal;
  cashChange: Decimal;
}

function estimatedCash(request: OrderRequest, r: Reservation, currency: string, schedule: CommissionSchedule): EstimatedCash {
  const quantity = new Decimal(request.quantity);
  const value = quantity.times(r.estimatedPrice);
  const gross = new Decimal(formatMoney(value, currency));
  const commission = commissionOn(value, schedule, currency);
  const buy = request.side === 'BUY';
  const cashChange = buy ? gross.plus(commission).neg() : gross.minus(commission);
  return { buy, quantity, gross, commission, cashChange };
}

/** A buy's hold and its legs' together must fit in what the account has available to trade. */
function buyingPowerRefusal(reserve: Decimal, available: Decimal, currency: string): Refusal | null {
  if (!reserve.gt(available)) return null;
  return {
    field: 'quantity',
    message: `Insufficient buying power: the order reserves ${formatMoney(reserve, currency)} ${currency}, ${formatMoney(available, currency)} available to trade`,
  };
}

/** A sell's position before and after; selling more than is held (no shorts) is refused. */
function positionChange(held: Decimal, quantity: Decimal, symbol: string, refusals: Refusal[]) {
  if (quantity.gt(held)) refusals.push({ field: 'quantity', message: insufficientPosition(held, symbol) });
  return { before: held.toString(), change: quantity.neg().toString(), after: held.minus(quantity).toString() };
}

/** What the client should know beside any refusal: a closed market, a market buy's collar, a limit far from the last price. */
function whatIfWarnings(request: OrderRequest, r: Reservation, marketOpen: boolean, collar: string): string[] {
  const warnings: string[] = [];
  if (!marketOpen) warnings.push('The market is closed: the order would wait for the next session');
  if (request.type === 'MARKET' && request.side === 'BUY')
    warnings.push(
      `A market buy fills at the ask; it reserves ${collar} above the ask and never pays more than ${r.collarPrice!.toString()}`,
    );
  if (request.limitPrice && new Decimal(request.limitPrice).minus(r.referencePrice).abs().gt(r.referencePrice.times('0.1')))
    warnings.push('The limit price is more than 10% away from the last price');
  return warnings;
}

/** Everything a what-if answers, reckoned. */
export interface WhatIf {
  request: OrderRequest;
  instrument: Instrument;
  accountType: string;
  reservation: Reservation;
  cash: EstimatedCash;
  balance: CashBalance;
  available: Decimal;
  /** What the order and its legs would hold. */
  reserve: Decimal;
  position: ReturnType<typeof positionChange> | null;
  orderClass: OrderClass;
  legs: ReadonlyArray<{ leg: LegRequest; held: Decimal }>;
  rejectReasons: Refusal[];
  warnings: string[];
}

/** The what-if on the wire: money in the instrument's currency, prices on its tick. */
function presentWhatIf(w: WhatIf) {
  const { request, instrument, cash } = w;
  const currency = instrument.currency;
  const change = (before: Decimal, delta: Decimal) => ({
    before: formatMoney(before, currency),
    change: formatMoney(delta, currency),
    after: formatMoney(before.plus(delta), currency),
  });
  // The long rates: a buy adds to what is held, a sell of a holding takes from it.
  const rules = marginRulesOf(w.accountType);
  const initialRate = rules.longInitial;
  const maintenanceRate = rules.longMaintenance;
  const sign = cash.buy ? 1 : -1;
  return {
    accountId: request.accountId,
    symbol: request.symbol,
    side: request.side,
    type: request.type,
    timeInForce: request.timeInForce,
    quantity: cash.quantity.toString(),
    currency,
    lastPrice: formatPrice(w.reservation.referencePrice, currency, instrument.tickSize),
    estimatedPrice: formatPrice(w.reservation.estimatedPrice, currency, instrument.tickSize),
    estimatedGrossAmount: formatMoney(cash.gross, currency),
    estimatedCommission: formatMoney(cash.commission, currency),
    estimatedTotal: formatMoney(cash.cashChange.abs(), currency),
    reservedAmount: formatMoney(w.reserve, currency),
    cash: change(new Decimal(w.balance.cash), cash.cashChange),
    buyingPower: change(w.available, w.reserve.neg()),
    margin: {
      initialRequirementChange: formatMoney(cash.gross.times(initialRate).times(sign), currency),
      maintenanceRequirementChange: formatMoney(cash.gross.times(maintenanceRate).times(sign), currency),
    },
    position: w.position,
    orderClass: w.orderClass,
    legs: w.legs.map(({ leg, held }) => presentLeg(leg, held, instrument)),
    wouldBeRejected: w.rejectReasons.length > 0,
    rejectReasons: w.rejectReasons,
    warnings: w.warnings,
  };
}

function presentLeg(leg: LegRequest, held: Decimal, instrument: Instrument) {
  const { currency, tickSize } = instrument;
  return {
    leg: leg.leg,
    side: leg.request.side,
    type: leg.request.type,
    limitPrice: leg.request.limitPrice === null ? null : formatPrice(leg.request.limitPrice, currency, tickSize),
    stopPrice: leg.request.stopPrice === null ? null : formatPrice(leg.request.stopPrice, currency, tickSize),
    quantity: leg.request.quantity,
    startsWhen: leg.pending ? 'the order fills' : 'at once',
    reservedAmount: formatMoney(held, currency),
  };
}
