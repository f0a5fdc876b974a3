import { workingLeg as leg } from './testing/order-fixtures';
import { replaceUnderWay } from './replacing-legs';

// Which legs count as being replaced, as a pure function.
describe('replaceUnderWay', () => {
  it('is a replacement waiting for its hold, or an open leg frozen by one; not a leg closed or working on its own', () => {
    expect(replaceUnderWay(leg({ status: 'ACCEPTED' }))).toBe(true);
    expect(replaceUnderWay(leg({ status: 'NEW', replaced_by_order_id: 'next' }))).toBe(true);
    expect(replaceUnderWay(leg({ status: 'PARTIALLY_FILLED', replaced_by_order_id: 'next' }))).toBe(true);
    expect(replaceUnderWay(leg({ status: 'NEW' }))).toBe(false);
    expect(replaceUnderWay(leg({ status: 'PARTIALLY_FILLED' }))).toBe(false);
    expect(replaceUnderWay(leg({ status: 'PENDING' }))).toBe(false);
    // A replaced leg once its replace finished (CANCELLED), a refused replacement (REJECTED).
    for (const status of ['CANCELLED', 'REJECTED', 'FILLED', 'EXPIRED'] as const) {
      expect(replaceUnderWay(leg({ status, replaced_by_order_id: 'next' }))).toBe(false);
      expect(replaceUnderWay(leg({ status }))).toBe(false);
    }
  });
});
