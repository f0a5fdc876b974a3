import Decimal from 'decimal.js';
import type { MarketInput } from './books';
import { allocate, computePortfolios } from './portfolios';

const asOf = new Date('2026-01-30T15:00:00.000Z');
const market: MarketInput = {
  prices: [
    { symbol: 'AAPL', currency: 'USD', lastPrice: '0.3', previousClose: '0.2' },
    { symbol: 'SAP', currency: 'EUR', lastPrice: '200', previousClose: '198' },
  ],
  fxRates: [
    { currency: 'EUR', usdRate: '1.1' },
    { currency: 'GBP', usdRate: '1.25' },
  ],
};

describe('portfolios', () => {
  it('groups by currency with totals, day change and allocation in the base currency', () => {
    const summary = computePortfolios({
      baseCurrency: 'USD',
      balances: [
        { currency: 'USD', cash: '10', availableToTrade: '10' },
        { currency: 'EUR', cash: '0', availableToTrade: '0' },
      ],
      positions: [
        { symbol: 'AAPL', quantity: '3', currency: 'USD' },
        { symbol: 'SAP', quantity: '1', currency: 'EUR' },
      ],
      market,
      asOf,
    });
    expect(summary).toEqual({
      baseCurrency: 'USD',
      // 10.90 USD + 200 EUR × 1.1 = 230.90; day change 0.30 + 2 × 1.1 = 2.50 against 228.40.
      totalValue: '230.90',
      dayChange: '2.50',
      dayChangePercent: '1.09',
      portfolios: [
        {
          currency: 'EUR',
          cash: '0.00',
          marketValue: '200.00',
          totalValue: '200.00',
          totalValueInBase: '220.00',
          allocationPercent: '95.28',
          dayChange: '2.00',
          dayChangePercent: '1.01',
          positionCount: 1,
        },
        // 3 × 0.3 is exactly 0.9; day change 3 × 0.1 = 0.30 against 10.60 → 2.83%.
        {
          currency: 'USD',
          cash: '10.00',
          marketValue: '0.90',
          totalValue: '10.90',
          totalValueInBase: '10.90',
          allocationPercent: '4.72',
          dayChange: '0.30',
          dayChangePercent: '2.83',
          positionCount: 1,
        },
      ],
      asOf: '2026-01-30T15:00:00.000Z',
    });
  });

  it('allocations add up to exactly 100.00 (largest remainder), even for thirds', () => {
    const summary = computePortfolios({
      baseCurrency: 'USD',
      balances: ['EUR', 'GBP', 'USD'].map((currency) => ({
        currency,
        cash: currency === 'USD' ? '1.25' : currency === 'GBP' ? '1' : '1.1363636363636363636',
        availableToTrade: '0',
      })),
      positions: [],
      market,
      asOf,
    });
    const shares = summary.portfolios.map((p) => p.allocationPercent);
    expect(shares.reduce((s, x) => s.plus(x), new Decimal(0)).toFixed(2)).toBe('100.00');
    expect([...shares].sort()).toEqual(['33.33', '33.33', '33.34']);
  });

  it('shows zero allocation and zero percentages for an empty or non-positive account', () => {
    const empty = computePortfolios({ baseCurrency: 'EUR', balances: [], positions: [], market, asOf });
    expect(empty).toMatchObject({ totalValue: '0.00', dayChange: '0.00', dayChangePercent: '0.00', portfolios: [] });
    const debit = computePortfolios({
      baseCurrency: 'USD',
      balances: [{ currency: 'USD', cash: '-5', availableToTrade: '0' }],
      positions: [],
      market,
      asOf,
    });
    expect(debit.portfolios[0]).toMatchObject({ totalValue: '-5.00', allocationPercent: '0.00', dayChangePercent: '0.00' });
  });

  it('allocate() always sums to 100.00 for positive totals, with negative parts too', () => {
    const cases = [
      ['1', '1', '1', '1', '1', '1', '1'],
      ['0.01', '999999.99'],
      ['-20', '70', '50.005'],
      ['2', '2', '2'],
    ];
    for (const parts of cases) {
      const values = parts.map((p) => new Decimal(p));
      const shares = allocate(
        values,
        values.reduce((s, v) => s.plus(v), new Decimal(0)),
      );
      expect(shares.reduce((s, x) => s.plus(x), new Decimal(0)).toFixed(2)).toBe('100.00');
    }
    expect(allocate([new Decimal(-20), new Decimal(70), new Decimal(50)], new Decimal(100))).toEqual(['-20.00', '70.00', '50.00']);
  });
});
