import { IdempotencyKeys } from '@trading/db';
import type { FundingTransactionView } from '../funding/funding.service';

/** Deposits, withdrawals and cancellations by Idempotency-Key: the answer itself is kept (jsonb). */
export const fundingIdempotency = new IdempotencyKeys<FundingTransactionView>('idempotency_keys', 'response');
