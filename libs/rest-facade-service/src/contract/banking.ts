import { z } from '@trading/config';
import { CASH_ACTIVITY_TYPES, currency, cursor, FUNDING_STATES, FUNDING_TYPES, id, money, named, text, timestamp } from './kit';

/**
 * What the banking endpoints (/v1/banking/…) answer: cash balances, cash activity and funding
 * transactions. Every object is closed: a field not listed here is a bug.
 */
const o = z.strictObject;
const list = <S extends z.ZodType>(items: S) => z.array(items);

const balanceFields = {
  currency,
  cash: money.meta({ description: 'settled + unsettled cash, including held' }),
  settledCash: money,
  unsettledCash: money,
  held: money.meta({ description: 'reserved for open orders and pending withdrawals' }),
  availableToTrade: money,
  availableToWithdraw: money,
  pendingIn: money.meta({ description: 'deposits not yet cleared (PENDING): added to cash when they clear' }),
  pendingOut: money.meta({ description: 'withdrawals not yet paid out (PENDING): still in cash and held until then' }),
};
const cashBalance = named('CashBalance', o(balanceFields));
export const accountCashBalance = named('AccountCashBalance', o({ accountId: id, ...balanceFields }));
export const balanceList = named('BalanceList', o({ accountId: id, balances: list(cashBalance) }));
const cashActivity = named(
  'CashActivity',
  o({
    id: text,
    type: z.enum(CASH_ACTIVITY_TYPES),
    currency,
    amount: money.meta({ description: 'Signed: positive credits cash' }),
    balanceAfter: money.meta({ description: 'Running cash balance in that currency after this movement' }),
    description: text,
    transactionId: id.nullable(),
    occurredAt: timestamp,
  }),
);
export const cashActivityPage = named('CashActivityPage', o({ accountId: id, activity: list(cashActivity), nextCursor: cursor }));
export const fundingTransaction = named(
  'FundingTransaction',
  o({
    id,
    accountId: id,
    type: z.enum(FUNDING_TYPES),
    state: z.enum(FUNDING_STATES),
    amount: money,
    currency,
    reference: text.nullable(),
    rejectReason: text.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
    completedAt: timestamp.nullable(),
    cancelledAt: timestamp.nullable(),
    rejectedAt: timestamp.nullable(),
  }),
);
export const fundingTransactionPage = named(
  'FundingTransactionPage',
  o({ accountId: id, transactions: list(fundingTransaction), nextCursor: cursor }),
);
