import Decimal from 'decimal.js';
import { draw, nextPrice } from './price-feed';
import { TradingHours } from './trading-hours';

describe('paper market: seeded price feed and trading hours', () => {
  const walk = (seed: number, steps: number) => {
    let price = '189.84';
    const path: string[] = [];
    for (let step = 1; step <= steps; step++) path.push((price = nextPrice(price, '0.01', draw(seed, 'AAPL', step), '0.002')));
    return path;
  };

  it('is reproducible from its seed, moves, and stays on the tick', () => {
    expect(walk(42, 200)).toEqual(walk(42, 200));
    expect(walk(42, 50)).not.toEqual(walk(43, 50));
    const path = walk(7, 200);
    expect(new Set(path).size).toBeGreaterThan(20);
    for (const p of path) expect(new Decimal(p).mod('0.01').isZero() && new Decimal(p).gt(0)).toBe(true);
    expect(nextPrice('0.7124', '0.0002', -50, '0.1')).toBe('0.0002'); // never below one tick
  });

  it('is always open by default; a UTC session ends DAY orders at its close', () => {
    const always = new TradingHours('always');
    expect(always.isOpen(new Date('2026-11-21T03:00:00Z'))).toBe(true);
    expect(always.sessionEnd(new Date('2026-11-21T15:00:00Z')).toISOString()).toBe('2026-11-22T00:00:00.000Z');
    const nyse = new TradingHours('14:30-21:00');
    expect(nyse.isOpen(new Date('2026-11-21T14:29:00Z'))).toBe(false);
    expect(nyse.isOpen(new Date('2026-11-21T15:00:00Z'))).toBe(true);
    expect(nyse.sessionEnd(new Date('2026-11-21T15:00:00Z')).toISOString()).toBe('2026-11-21T21:00:00.000Z');
    expect(nyse.sessionEnd(new Date('2026-11-21T22:00:00Z')).toISOString()).toBe('2026-11-22T21:00:00.000Z');
  });
});
