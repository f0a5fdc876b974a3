import { z } from '@trading/config';
import { currency, cursor, decimal, id, money, named, price, quantity, text, timestamp } from './kit';

/**
 * What the accounts endpoints (/v1/accounts/…) answer: accounts and their settings, positions,
 * margin and portfolios. Every object is closed: a field not listed here is a bug.
 */
const o = z.strictObject;
const list = <S extends z.ZodType>(items: S) => z.array(items);

const accountSettingsFields = {
  nickname: text.nullable().meta({ description: "The owner's own name for the account (1 to 64 characters); null when none is set" }),
  tradeConfirmationEmails: z.boolean().meta({ description: 'Whether each fill is confirmed by email (true unless turned off)' }),
};
const account = named(
  'Account',
  o({
    id,
    number: text,
    type: z.enum(['CASH', 'MARGIN']),
    status: z.enum(['ACTIVE', 'RESTRICTED', 'CLOSED']),
    baseCurrency: currency,
    createdAt: timestamp,
    ...accountSettingsFields,
  }),
);
export const accountList = named('AccountList', o({ accounts: list(account) }));
export const accountSettings = named(
  'AccountSettings',
  o({ accountId: id, ...accountSettingsFields }),
  "The account's settings as they are after the change",
);
const percent = decimal.nullable().meta({ description: 'In percent, two decimals (half-up)', examples: ['10.15'] });
const positionFields = {
  symbol: text,
  quantity: quantity.meta({ description: 'Negative for a short holding' }),
  quantityAvailable: quantity.meta({
    description: 'quantity less what working sell orders already sell: what a new sell or a close may still sell (never below 0)',
  }),
  averageCost: price,
  costBasis: money,
  marketPrice: price,
  marketValue: money,
  unrealizedPnl: money,
  unrealizedPnlPercent: percent.meta({ description: 'unrealizedPnl / |costBasis| × 100, two decimals; null when costBasis is 0' }),
  realizedPnl: money,
  dayChange: money,
  dayChangePercent: percent.meta({
    description: '(last price − previous close) / previous close × 100, two decimals; null when there is no previous close',
  }),
  currency,
  updatedAt: timestamp,
};
export const position = named('Position', o({ accountId: id, ...positionFields }));
const positionItem = named('PositionItem', o(positionFields));
export const positionPage = named('PositionPage', o({ accountId: id, positions: list(positionItem), nextCursor: cursor }));
const marginFigures = named(
  'MarginFigures',
  o({
    currency,
    cash: money,
    marketValue: money,
    equity: money,
    initialRequirement: money,
    maintenanceRequirement: money,
    excessLiquidity: money,
    buyingPower: money,
  }),
);
export const margin = named(
  'Margin',
  o({
    accountId: id,
    accountType: z.enum(['CASH', 'MARGIN']),
    baseCurrency: currency,
    asOf: timestamp,
    total: marginFigures,
    byCurrency: list(marginFigures),
  }),
);
const portfolio = named(
  'Portfolio',
  o({
    currency,
    cash: money,
    marketValue: money,
    totalValue: money,
    totalValueInBase: money,
    allocationPercent: decimal,
    dayChange: money,
    dayChangePercent: decimal,
    positionCount: z.int().min(0),
  }),
);
export const portfolioSummary = named(
  'PortfolioSummary',
  o({
    accountId: id,
    baseCurrency: currency,
    totalValue: money,
    dayChange: money,
    dayChangePercent: decimal,
    asOf: timestamp,
    portfolios: list(portfolio),
  }),
);
