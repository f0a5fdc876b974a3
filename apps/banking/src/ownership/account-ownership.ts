import { Pool } from 'undici';
import { INTERNAL_CLAIMS_HEADER, type Claims, type InternalClaimsSigner } from '@trading/auth';
import { AppError } from '@trading/errors';
import { REQUEST_ID_HEADER } from '@trading/logging';

export interface OwnedAccount {
  id: string;
  baseCurrency: string;
  status: 'ACTIVE' | 'RESTRICTED' | 'CLOSED';
}

/** Tells whether the caller owns an account; banking cannot read the accounts service's tables. */
export interface AccountOwnership {
  /** The account when it exists and is the caller's; null otherwise. */
  find(accountId: string, claims: Claims, requestId?: string): Promise<OwnedAccount | null>;
  /** Every account of the caller (ids). */
  ownedIds(claims: Claims, requestId?: string): Promise<string[]>;
  close(): Promise<void>;
}

const ACCOUNT_QUERY = 'query($id: ID!) { account(id: $id) { id baseCurrency status } }';

/**
 * Asks the accounts subgraph, whose `account(id)` resolves only the caller's own accounts. The
 * request carries the caller's identity signed with banking's own key, narrowed to
 * `read:accounts` (all accounts trusts banking with): banking asks on the caller's behalf whether the account is theirs, which a
 * caller holding only banking scopes must still be able to learn for their own account.
 */
export class HttpAccountOwnership implements AccountOwnership {
  private readonly pool: Pool;
  private readonly path: string;

  constructor(
    accountsUrl: string,
    private readonly signer: InternalClaimsSigner,
  ) {
    const url = new URL(accountsUrl);
    this.pool = new Pool(url.origin, { connections: 16, keepAliveTimeout: 60_000 });
    this.path = url.pathname;
  }

  async find(accountId: string, claims: Claims, requestId?: string): Promise<OwnedAccount | null> {
    const data = await this.ask<{ account?: OwnedAccount | null }>(ACCOUNT_QUERY, { id: accountId }, claims, requestId);
    return data.account ?? null;
  }

  async ownedIds(claims: Claims, requestId?: string): Promise<string[]> {
    const data = await this.ask<{ accounts?: Array<{ id: string }> }>('{ accounts { id } }', {}, claims, requestId);
    return (data.accounts ?? []).map((a) => a.id);
  }

  private async ask<T>(query: string, variables: Record<string, unknown>, claims: Claims, requestId?: string): Promise<T> {
    const header = await this.signer.signFor({ ...claims, scope: ['read:accounts'] }, 'accounts');
    let body: { data?: T | null; errors?: unknown[] };
    try {
      const res = await this.pool.request({
        method: 'POST',
        path: this.path,
        headers: { 'content-type': 'application/json', [INTERNAL_CLAIMS_HEADER]: header, ...(requestId ? { [REQUEST_ID_HEADER]: requestId } : {}) },
        body: JSON.stringify({ query, variables }),
        headersTimeout: 5000,
        bodyTimeout: 5000,
      });
      body = (await res.body.json()) as typeof body;
      if (res.statusCode !== 200 && !body?.data) throw new Error(`accounts answered ${res.statusCode}`);
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'The accounts service could not confirm the account; try again');
    }
    if (body.errors?.length || !body.data) throw new AppError('SERVICE_UNAVAILABLE', 'The accounts service could not confirm the account; try again');
    return body.data;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
