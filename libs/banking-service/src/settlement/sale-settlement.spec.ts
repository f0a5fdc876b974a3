import { settlementDate } from './sale-settlement';

describe('settlement dates', () => {
  it('counts business days: T+1 from Friday is Monday, from Monday is Tuesday; T+0 is the trade date', () => {
    expect(settlementDate(new Date('2026-11-20T15:00:00Z'), 1)).toBe('2026-11-23'); // Friday → Monday
    expect(settlementDate(new Date('2026-11-23T15:00:00Z'), 1)).toBe('2026-11-24');
    expect(settlementDate(new Date('2026-11-21T10:00:00Z'), 1)).toBe('2026-11-23'); // a Saturday fill (paper market) → Monday
    expect(settlementDate(new Date('2026-11-19T23:59:00Z'), 2)).toBe('2026-11-23'); // Thursday T+2 → Monday
    expect(settlementDate(new Date('2026-11-20T15:00:00Z'), 0)).toBe('2026-11-20');
  });
});
