import { assertReachesAccount, type Claims, type InternalClaimsSigner } from '@trading/auth';
import { AppError } from '@trading/errors';
import { InternalClient } from '@trading/internal-http';
import type { GraphQLEndpoint } from '@trading/service';

/** A caller's account as the accounts subgraph describes it to banking and the OMS. */
export interface OwnedAccount {
  id: string;
  type: 'CASH' | 'MARGIN';
  status: 'ACTIVE' | 'RESTRICTED' | 'CLOSED';
  baseCurrency: string;
  /** Present when asked for (a sell): the holding, and how much of it came from trades accounts has applied. */
  positionSettlement?: { quantity: string; tradedQuantity: string };
}

/** Whether the caller owns an account, and which accounts they own: banking and the OMS cannot read the accounts service's tables. */
export interface AccountsDirectory {
  /**
   * The account when it exists and is the caller's; null otherwise. `symbol`: also the holding in
   * it. An account the caller's token was not given is FORBIDDEN naming accountId, before anyone is asked.
   */
  find(accountId: string, claims: Claims, options?: { symbol?: string; requestId?: string }): Promise<OwnedAccount | null>;
  /** Every account of the caller (ids), e.g. for `_entities` ownership checks. */
  ownedIds(claims: Claims, requestId?: string): Promise<string[]>;
  /** The symbols the account holds a position in (closing every position); empty for an account that is not the caller's. */
  heldSymbols?(accountId: string, claims: Claims, requestId?: string): Promise<string[]>;
  close(): Promise<void>;
}

const ACCOUNT_QUERY = `query($id: ID!, $symbol: String!, $withPosition: Boolean!) {
  account(id: $id) { id type status baseCurrency positionSettlement(symbol: $symbol) @include(if: $withPosition) { quantity tradedQuantity } }
}`;

const POSITIONS_QUERY = `query($id: ID!, $cursor: String) {
  account(id: $id) { positions(limit: 100, cursor: $cursor) { nodes { symbol quantity } nextCursor } }
}`;

/**
 * Asks the accounts subgraph on the caller's behalf: their identity, signed with this service's
 * own key and narrowed to `read:accounts` (all accounts trusts a peer with). `account(id)`
 * resolves only the caller's own accounts, so null means unknown or someone else's; a caller
 * holding only banking or order scopes can still learn that much of their own account.
 */
export class AccountsSubgraphDirectory implements AccountsDirectory {
  private readonly client: InternalClient;
  private readonly path: string;

  /** `inProcess`: the accounts subgraph of this process (the all-in-one), asked without a socket. */
  constructor(url: string, signer: InternalClaimsSigner, inProcess?: () => GraphQLEndpoint | undefined) {
    this.client = new InternalClient(url, 'accounts', signer, { inProcessGraphql: inProcess });
    this.path = new URL(url).pathname;
  }

  async find(accountId: string, claims: Claims, options: { symbol?: string; requestId?: string } = {}): Promise<OwnedAccount | null> {
    assertReachesAccount(claims, accountId);
    const variables = { id: accountId, symbol: options.symbol ?? 'X', withPosition: !!options.symbol };
    const data = await this.ask<{ account?: OwnedAccount | null }>(ACCOUNT_QUERY, variables, claims, options.requestId);
    return data.account ?? null;
  }

  async ownedIds(claims: Claims, requestId?: string): Promise<string[]> {
    const data = await this.ask<{ accounts?: Array<{ id: string }> }>('{ accounts { id } }', {}, claims, requestId);
    return (data.accounts ?? []).map((a) => a.id);
  }

  async heldSymbols(accountId: string, claims: Claims, requestId?: string): Promise<string[]> {
    const symbols: string[] = [];
    let cursor: string | null = null;
    do {
      const data: { account?: { positions: { nodes: Array<{ symbol: string; quantity: string }>; nextCursor: string | null } } | null } =
        await this.ask(POSITIONS_QUERY, { id: accountId, cursor }, claims, requestId);
      if (!data.account) return [];
      for (const p of data.account.positions.nodes) if (Number(p.quantity) !== 0) symbols.push(p.symbol);
      cursor = data.account.positions.nextCursor;
    } while (cursor);
    return symbols;
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

/**
 * Whether a user owns an account, for a service that needs ownership alone (banking's holds,
 * asked on every buy). An account never changes owner (accounts has no statement that moves
 * one), so a confirmed pair stays true and accounts is asked once per pair; only confirmations
 * are kept, so an account opened later is still found. Status is not ownership: whoever must
 * refuse a restricted account asks `find` (the OMS does, on every order).
 */
export class KnownOwners {
  /** `${userId} ${accountId}`, oldest first (a Set keeps insertion order). */
  private readonly pairs = new Set<string>();

  constructor(
    private readonly directory: AccountsDirectory,
    /** Pairs kept at most: about 100 bytes each. */
    private readonly maxEntries = 100_000,
  ) {}

  async owns(accountId: string, claims: Claims, requestId?: string): Promise<boolean> {
    // Pairs are kept per user, not per token: a token limited to chosen accounts is checked first.
    assertReachesAccount(claims, accountId);
    const pair = `${claims.sub} ${accountId}`;
    if (this.pairs.has(pair)) return true;
    if (!(await this.directory.find(accountId, claims, { requestId }))) return false;
    this.pairs.add(pair);
    if (this.pairs.size > this.maxEntries) this.pairs.delete(this.pairs.values().next().value!);
    return true;
  }
}
export * from './account-changes';
export * from './margin-rules';
