import { INTERNAL_HOLDS_SCOPE, type Claims, type InternalClaimsSigner } from '@trading/auth';
import { AppError } from '@trading/errors';
import { InternalClient } from '@trading/internal-http';

export interface CashBalance {
  currency: string;
  cash: string;
  held: string;
  availableToTrade: string;
}

/**
 * Banking, as the OMS uses it: the internal hold API (the OMS's own identity with scope
 * internal:holds, acting for the order's user and naming its account; every call idempotent by
 * order id) and the caller's balance for what-if.
 */
export class BankingClient {
  private readonly client: InternalClient;
  constructor(url: string, signer: InternalClaimsSigner) {
    this.client = new InternalClient(url, 'banking', signer);
  }

  /** The OMS's own identity acting for the order's user: scope internal:holds, which no edge may pass on. */
  private holdsCall<T>(path: string, userId: string, body: unknown): Promise<T> {
    return this.client.post<T>(path, { claims: { sub: userId, sid: 'oms', kind: 'pat', scope: [INTERNAL_HOLDS_SCOPE] }, body });
  }

  /** Reserves cash for a buy. A refusal (insufficient funds) comes back as an UNPROCESSABLE AppError naming quantity. */
  async placeHold(hold: { orderId: string; accountId: string; currency: string; amount: string }, userId: string): Promise<void> {
    try {
      await this.holdsCall('/internal/holds', userId, hold);
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNPROCESSABLE')
        throw new AppError('UNPROCESSABLE', `Insufficient buying power: ${err.message}`, { field: 'quantity' });
      throw new AppError('SERVICE_UNAVAILABLE', 'Banking could not reserve the cash for this order; try again');
    }
  }

  /**
   * Moves a replaced order's hold to its replacement in one banking step: the old hold keeps
   * `keep` (what its fills cost), the replacement holds `amount`. A refusal (insufficient funds)
   * is an UNPROCESSABLE AppError naming quantity; banking unreachable, SERVICE_UNAVAILABLE.
   */
  async replaceHold(
    hold: { orderId: string; replacementOrderId: string; accountId: string; keep: string; amount: string },
    userId: string,
  ): Promise<void> {
    try {
      await this.holdsCall(`/internal/holds/${encodeURIComponent(hold.orderId)}/replace`, userId, hold);
    } catch (err) {
      if (err instanceof AppError && (err.code === 'UNPROCESSABLE' || err.code === 'CONFLICT'))
        throw new AppError('UNPROCESSABLE', `Insufficient buying power: ${err.message}`, { field: 'quantity' });
      throw new AppError('SERVICE_UNAVAILABLE', 'Banking could not move the hold to the replacement; try again');
    }
  }

  /** Gives a hold back in full; true when released (or there was none). */
  async releaseHold(orderId: string, owner: { userId: string; accountId: string }): Promise<boolean> {
    try {
      await this.holdsCall(`/internal/holds/${encodeURIComponent(orderId)}/release`, owner.userId, { accountId: owner.accountId });
      return true;
    } catch (err) {
      return err instanceof AppError && err.code === 'NOT_FOUND';
    }
  }

  /** The caller's balance in one currency, from banking's part of the Account entity. */
  async balance(accountId: string, currency: string, claims: Claims): Promise<CashBalance> {
    const query =
      'query($r: [_Any!]!, $c: String!) { _entities(representations: $r) { ... on Account { balance(currency: $c) { currency cash held availableToTrade } } } }';
    try {
      const data = await this.client.graphql<{ _entities: Array<{ balance?: CashBalance } | null> }>(
        '/graphql',
        query,
        { r: [{ __typename: 'Account', id: accountId }], c: currency },
        {
          claims: { ...claims, scope: ['read:banking'] },
        },
      );
      const balance = data._entities[0]?.balance;
      if (balance) return balance;
    } catch {
      /* below */
    }
    throw new AppError('SERVICE_UNAVAILABLE', 'Banking could not tell the balance; try again');
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
