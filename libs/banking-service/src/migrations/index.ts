import { Ledger1732230000002 } from './1732230000002-ledger';
import { FundingHolds1732230000005 } from './1732230000005-funding-holds';
import { Settlement1732230000022 } from './1732230000022-settlement';
import { SaleSettlement1732230000024 } from './1732230000024-sale-settlement';
import { BookBalances1732230000040 } from './1732230000040-book-balances';
import { PendingFundingIndex1732230000045 } from './1732230000045-pending-funding-index';
import { FundingOutbox1732230000120 } from './1732230000120-funding-outbox';

/** The banking database's migrations, oldest first. */
export const bankingMigrations = [
  Ledger1732230000002,
  FundingHolds1732230000005,
  Settlement1732230000022,
  SaleSettlement1732230000024,
  BookBalances1732230000040,
  PendingFundingIndex1732230000045,
  FundingOutbox1732230000120,
];
