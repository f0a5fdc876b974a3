import { Pool } from 'undici';
import { INTERNAL_CLAIMS_HEADER, INTERNAL_HOLDS_SCOPE, type Claims, type InternalClaimsSigner } from '@trading/auth';
import { AppError } from '@trading/errors';
import { REQUEST_ID_HEADER } from '@trading/logging';

export interface OwnedAccount {
  id: string;
  type: 'CASH' | 'MARGIN';
  status: 'ACTIVE' | 'RESTRICTED' | 'CLOSED';
  baseCurrency: string;
  /** Present when asked for: the holding and how much of it came from trades accounts has applied. */
  positionSettlement?: { quantity: string; tradedQuantity: string };
}

async function postJson(pool: Pool, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: any }> {
  const res = await pool.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: 5000,
    bodyTimeout: 5000,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

const poolFor = (url: string) => new Pool(new URL(url).origin, { connections: 16, keepAliveTimeout: 60_000 });

/**
 * Asks the accounts subgraph on the caller's behalf (their identity, narrowed to
 * read:accounts): `account(id)` resolves only the caller's own accounts, so a null answer means
 * unknown or someone else's. A sell also reads the holding in the same query.
 */
export class AccountsClient {
  private readonly pool: Pool;
  private readonly path: string;
  constructor(
    url: string,
    private readonly signer: InternalClaimsSigner,
  ) {
    this.pool = poolFor(url);
    this.path = new URL(url).pathname;
  }

  async find(accountId: string, claims: Claims, options: { symbol?: string; requestId?: string } = {}): Promise<OwnedAccount | null> {
    const query = `query($id: ID!, $symbol: String!, $withPosition: Boolean!) {
      account(id: $id) { id type status baseCurrency positionSettlement(symbol: $symbol) @include(if: $withPosition) { quantity tradedQuantity } }
    }`;
    let res: { status: number; body: any };
    try {
      const header = await this.signer.signFor({ ...claims, scope: ['read:accounts'] }, 'accounts');
      res = await postJson(
        this.pool,
        this.path,
        { [INTERNAL_CLAIMS_HEADER]: header, ...(options.requestId ? { [REQUEST_ID_HEADER]: options.requestId } : {}) },
        { query, variables: { id: accountId, symbol: options.symbol ?? 'X', withPosition: !!options.symbol } },
      );
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'The accounts service could not confirm the account; try again');
    }
    if (res.status !== 200 || res.body?.errors?.length || !res.body?.data) throw new AppError('SERVICE_UNAVAILABLE', 'The accounts service could not confirm the account; try again');
    return (res.body.data.account as OwnedAccount | null) ?? null;
  }

  /** Every account of the caller (ids), for `_entities` ownership checks. */
  async ownedIds(claims: Claims, requestId?: string): Promise<string[]> {
    let res: { status: number; body: any };
    try {
      const header = await this.signer.signFor({ ...claims, scope: ['read:accounts'] }, 'accounts');
      res = await postJson(this.pool, this.path, { [INTERNAL_CLAIMS_HEADER]: header, ...(requestId ? { [REQUEST_ID_HEADER]: requestId } : {}) }, { query: '{ accounts { id } }' });
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'The accounts service could not confirm the account; try again');
    }
    if (res.status !== 200 || res.body?.errors?.length || !res.body?.data) throw new AppError('SERVICE_UNAVAILABLE', 'The accounts service could not confirm the account; try again');
    return (res.body.data.accounts as Array<{ id: string }>).map((a) => a.id);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

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
  private readonly pool: Pool;
  constructor(
    url: string,
    private readonly signer: InternalClaimsSigner,
  ) {
    this.pool = poolFor(url);
  }

  private async internal(path: string, userId: string, body?: unknown): Promise<{ status: number; body: any }> {
    const header = await this.signer.signFor({ sub: userId, sid: 'oms', kind: 'pat', scope: [INTERNAL_HOLDS_SCOPE] }, 'banking');
    return postJson(this.pool, path, { [INTERNAL_CLAIMS_HEADER]: header }, body ?? {});
  }

  /** Reserves cash for a buy. A refusal (insufficient funds) comes back as an UNPROCESSABLE AppError naming quantity. */
  async placeHold(hold: { orderId: string; accountId: string; currency: string; amount: string }, userId: string): Promise<void> {
    let res: { status: number; body: any };
    try {
      res = await this.internal('/internal/holds', userId, hold);
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'Banking could not reserve the cash for this order; try again');
    }
    if (res.status === 200 || res.status === 201) return;
    if (res.status === 422) throw new AppError('UNPROCESSABLE', `Insufficient buying power: ${String(res.body?.detail ?? 'refused by banking')}`, { field: 'quantity' });
    throw new AppError('SERVICE_UNAVAILABLE', 'Banking could not reserve the cash for this order; try again');
  }

  /** Gives a hold back in full; true when released (or there was none). */
  async releaseHold(orderId: string, owner: { userId: string; accountId: string }): Promise<boolean> {
    try {
      const res = await this.internal(`/internal/holds/${encodeURIComponent(orderId)}/release`, owner.userId, { accountId: owner.accountId });
      return res.status === 200 || res.status === 404;
    } catch {
      return false;
    }
  }

  /** The caller's balance in one currency, from banking's part of the Account entity. */
  async balance(accountId: string, currency: string, claims: Claims): Promise<CashBalance> {
    const query = 'query($r: [_Any!]!, $c: String!) { _entities(representations: $r) { ... on Account { balance(currency: $c) { currency cash held availableToTrade } } } }';
    try {
      const header = await this.signer.signFor({ ...claims, scope: ['read:banking'] }, 'banking');
      const res = await postJson(this.pool, '/graphql', { [INTERNAL_CLAIMS_HEADER]: header }, { query, variables: { r: [{ __typename: 'Account', id: accountId }], c: currency } });
      const balance = res.body?.data?._entities?.[0]?.balance;
      if (res.status === 200 && balance) return balance as CashBalance;
    } catch {
      /* below */
    }
    throw new AppError('SERVICE_UNAVAILABLE', 'Banking could not tell the balance; try again');
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
