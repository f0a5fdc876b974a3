import { AppError, isUuid } from '@trading/errors';
import type { BackOffice } from '../back-office/back-office';

/** One of a user's brokerage accounts, as the consent page and the token form offer it. */
export interface UserAccount {
  accountId: string;
  number: string;
  type: 'CASH' | 'MARGIN';
  status: 'ACTIVE' | 'RESTRICTED' | 'CLOSED';
  baseCurrency: string;
}

/**
 * A user's accounts, asked of the accounts service (which owns them) through its back-office API:
 * auth keeps no copy, so an account opened a moment ago is offered at once.
 */
export class UserAccounts {
  constructor(private readonly backOffice: Pick<BackOffice, 'get'>) {}

  /** The accounts a user may give an app or a token: every one not closed, oldest first. */
  async choosable(userId: string): Promise<UserAccount[]> {
    const { accounts } = await this.backOffice.get<{ accounts: UserAccount[] }>('accounts', '/accounts', { userId });
    return accounts.filter((a) => a.status !== 'CLOSED');
  }
}

/** How an account reads in a list to choose from: its type, number and currency. */
export const accountLabel = (a: Pick<UserAccount, 'type' | 'number' | 'baseCurrency'>) => `${a.type} ${a.number} (${a.baseCurrency})`;

/**
 * The accounts chosen in a form or request body (one id, or a list of them), each one of
 * `offered`, lower case, without repeats. Nothing chosen is an empty list: callers decide what
 * that means (a token for every account, or a refusal).
 */
export function chosenAccounts(value: unknown, offered: readonly Pick<UserAccount, 'accountId'>[], field = 'accounts'): string[] {
  const given = value === undefined || value === null || value === '' ? [] : Array.isArray(value) ? value : [value];
  if (given.length > 100) throw new AppError('BAD_USER_INPUT', 'At most 100 accounts may be chosen', { field });
  const ids = new Set<string>();
  for (const id of given) {
    if (!isUuid(id)) throw new AppError('BAD_USER_INPUT', `${field} must list account ids`, { field });
    const known = offered.find((a) => a.accountId === id.toLowerCase());
    // Someone else's account and an unknown one read the same: nothing about other users leaks.
    if (!known) throw new AppError('UNPROCESSABLE', `Account ${id} is not one of yours that can be chosen`, { field });
    ids.add(known.accountId);
  }
  return [...ids];
}
