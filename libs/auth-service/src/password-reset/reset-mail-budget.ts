import { createHash } from 'node:crypto';
import { errors } from '@trading/errors';
import { BudgetChain, RequestLimiter, takeInTurn, type ChainStep } from '@trading/rate-limit';
import type { KeyValueStore } from '@trading/redis';

export interface ResetMailRules {
  /** Mails per (account, requesting address) per window: what one address can do to one account. */
  perAccountAndAddress: number;
  /** Mails per account per window, whichever addresses ask: what many addresses together can do to one account. */
  perAccount: number;
  windowSeconds: number;
  /** One mail per account per this long goes out whatever the budgets say. */
  floorSeconds: number;
}

/**
 * Whether a reset request sends a mail. Two budgets, counted in Redis (every instance shares
 * them) and charged together or not at all, so a request that sends nothing costs nothing:
 * per (account, requesting address), so a stranger asking for someone's address spends only the
 * stranger's own budget, and per account over all addresses, so many addresses together cannot
 * flood one inbox. Neither can keep the owner from a link: an account with no mail in the last
 * `floorSeconds` gets one whatever the budgets say, and a link lives longer than that, so the
 * owner always holds a live link or receives one. The address itself is held by the per-minute
 * request limit in front of this. Keys are hashes: no address is stored in Redis.
 */
export class ResetMailBudget {
  private readonly perAccountAndAddress: RequestLimiter;
  private readonly perAccount: RequestLimiter;
  private readonly chain: BudgetChain | undefined;

  constructor(
    private readonly store: KeyValueStore,
    private readonly namespace: string,
    private readonly rules: ResetMailRules,
  ) {
    const budget = (name: string, perWindow: number) =>
      new RequestLimiter(store, namespace, { name, perWindow, windowSeconds: rules.windowSeconds });
    this.perAccountAndAddress = budget('password-reset:account-address', rules.perAccountAndAddress);
    this.perAccount = budget('password-reset:account', rules.perAccount);
    this.chain = BudgetChain.on(store);
  }

  /** True when a mail for `account` (a normalised address) asked for from `address` goes out; counts it if so. */
  async allows(account: string, address: string): Promise<boolean> {
    const steps: ChainStep[] = [
      { limiter: this.perAccountAndAddress, key: `${account}|${address}` },
      { limiter: this.perAccount, key: account },
    ];
    // A refused request gives back what it was charged: the budgets count mails sent, not requests.
    const taken = this.chain ? await this.chain.take(steps, 1, true) : await takeInTurn(steps, 1, true);
    const floor = resetMailFloorKey(this.namespace, account);
    try {
      if (!taken.some((s) => s.blocked)) {
        await this.store.set(floor, '1', this.rules.floorSeconds);
        return true;
      }
      return await this.store.setIfAbsent(floor, '1', this.rules.floorSeconds);
    } catch {
      throw errors.unavailable('Rate limiting is temporarily unavailable; retry shortly');
    }
  }
}

/** The key that marks an account's last reset mail, for `floorSeconds`: while it lives, spent budgets mean no mail. */
export const resetMailFloorKey = (namespace: string, account: string) =>
  `ratelimit:${namespace}:password-reset:floor:${createHash('sha256').update(account).digest('base64url').slice(0, 32)}`;
