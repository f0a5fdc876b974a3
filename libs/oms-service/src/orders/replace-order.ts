import { idempotencyOwner, parseIdempotencyKey, type Claims } from '@trading/auth';
import { requestHash } from '@trading/db';
import { AppError } from '@trading/errors';
import { answerOrder, checkCanTrade, earlierOrder, ownedAccount, type OrderDesk } from './order-desk';
import { checkReplaceableClass } from './classes/order-classes';
import { withTrailingStop } from './classes/trailing-stop';
import { checkInstrumentRules, checkPriceBand, parseReplaceRequest } from './order-rules';
import { orderById, presentOrder, type OrderView } from './order-store';
import { finishReplacement } from './replacement';
import { recordReplacement, replacementTerms } from './replacing';

/**
 * Replaces a working order: one new order, linked both ways (`replaces`, `replacedBy`), carrying
 * the remainder (the new `quantity` is the total, fills included, and must exceed what has
 * filled); the old order ends CANCELLED "Replaced by order …". The old order's row lock (the one
 * the engine fills under) decides a race with a fill: a fill committed first leaves a smaller
 * remainder (or a FILLED order: 409); the replace first freezes the old order, so nothing more
 * fills on it. A buy's hold moves in one banking step (grows or shrinks by the difference); a
 * refusal (buying power, position) leaves the old order as it was and is a 422 naming the
 * field. A pair's leg is replaced within its pair (replacing-legs.ts).
 *
 * The same pipeline as placing: parse, the class's rules, the instrument's rules, record (under
 * the old order's lock), then the hold.
 */
export async function replaceOrder(
  desk: OrderDesk,
  claims: Claims,
  input: Record<string, unknown>,
  idempotencyKey: unknown,
  requestId?: string,
): Promise<OrderView> {
  const request = parseReplaceRequest(input);
  const key = parseIdempotencyKey(idempotencyKey);
  const keyOwner = idempotencyOwner(claims);
  const hash = requestHash('replaceOrder', request);
  const existing = await orderById(desk.dataSource, request.orderId);
  if (!existing || existing.account_id !== request.accountId) throw new AppError('NOT_FOUND', 'Order not found', { field: 'orderId' });
  const account = await ownedAccount(desk, request.accountId, claims, requestId, existing.side === 'SELL' ? existing.symbol : undefined);
  if (key) {
    const earlier = await earlierOrder(desk, keyOwner, key, hash);
    if (earlier) return answerOrder(earlier);
  }
  checkReplaceableClass(existing, request);
  const proposed = replacementTerms(existing, request);
  const instrument = checkInstrumentRules(proposed, await desk.instruments.find(proposed.symbol));
  const merged = withTrailingStop(proposed, instrument); // a trailing stop starts again from the current price
  checkPriceBand(merged, instrument, desk.options.priceBand);
  checkCanTrade(account);
  const recorded = await desk.dataSource.transaction((tx) =>
    recordReplacement(tx, {
      claim: key ? { owner: keyOwner, key, hash } : undefined,
      userId: claims.sub,
      account,
      oldId: existing.id,
      merged,
      instrument,
      terms: desk.terms,
      quantityChanged: request.quantity !== null,
      ocoGroupId: existing.oco_group_id,
      sessionEnd: () => desk.hours.sessionEnd(),
    }),
  );
  if ('replay' in recorded) return answerOrder((await earlierOrder(desk, keyOwner, key!, hash))!);
  if (merged.side !== 'BUY') return presentOrder(recorded);
  return presentOrder(await finishReplacement(desk.dataSource, desk.banking, recorded.id));
}
