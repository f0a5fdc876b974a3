import type { Claims, InternalClaimsSigner } from '@trading/auth';
import { AppError } from '@trading/errors';
import { InternalClient } from '@trading/internal-http';
import type { GraphQLEndpoint } from '@trading/service';

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
  private readonly client: InternalClient;
  private readonly path: string;

  /** `inProcess`: the accounts subgraph of this process (the all-in-one), asked without a socket. */
  constructor(accountsUrl: string, signer: InternalClaimsSigner, inProcess?: () => GraphQLEndpoint | undefined) {
    this.client = new InternalClient(accountsUrl, 'accounts', signer, { inProcessGraphql: inProcess });
    this.path = new URL(accountsUrl).pathname;
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
    try {
      return await this.client.graphql<T>(this.path, query, variables, { claims: { ...claims, scope: ['read:accounts'] }, requestId });
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'The accounts service could not confirm the account; try again');
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
