import type { CashInput, HoldingInput, MarketInput } from './books';
import { computeMargin } from './margin';

const asOf = new Date('2026-01-30T15:00:00.000Z');
const market: MarketInput = {
  prices: [
    { symbol: 'AAPL', currency: 'USD', lastPrice: '0.1', previousClose: '0.09' },
    { symbol: 'MSFT', currency: 'USD', lastPrice: '150', previousClose: '149' },
    { symbol: 'TSLA', currency: 'USD', lastPrice: '250', previousClose: '251' },
    { symbol: 'SAP', currency: 'EUR', lastPrice: '200', previousClose: '198' },
    { symbol: 'VOD', currency: 'GBP', lastPrice: '0.7124', previousClose: '0.7138' },
  ],
  fxRates: [
    { currency: 'EUR', usdRate: '1.1' },
    { currency: 'GBP', usdRate: '1.25' },
    { currency: 'USD', usdRate: '1' },
  ],
};
const cash = (currency: string, amount: string, availableToTrade = amount): CashInput => ({ currency, cash: amount, availableToTrade });
const hold = (symbol: string, quantity: string, currency = 'USD'): HoldingInput => ({ symbol, quantity, currency });
const margin = (accountType: 'CASH' | 'MARGIN', baseCurrency: string, balances: CashInput[], positions: HoldingInput[], m = market) =>
  computeMargin({ accountType, baseCurrency, balances, positions, market: m, asOf });

describe('margin rules', () => {
  it('CASH: 100% requirements, buying power is the cash available to trade, exact decimals (3 × 0.1)', () => {
    const result = margin('CASH', 'USD', [cash('USD', '1000.10', '900.10')], [hold('AAPL', '3')]);
    const usd = {
      currency: 'USD',
      cash: '1000.10',
      marketValue: '0.30',
      equity: '1000.40',
      initialRequirement: '0.30',
      maintenanceRequirement: '0.30',
      excessLiquidity: '1000.10',
      buyingPower: '900.10',
    };
    expect(result).toEqual({ baseCurrency: 'USD', total: usd, byCurrency: [usd], asOf: '2026-01-30T15:00:00.000Z' });
  });

  it('MARGIN: Reg T 50% initial, 25% maintenance, buying power (equity − initial) / 0.5', () => {
    const { total } = margin('MARGIN', 'USD', [cash('USD', '10000')], [hold('MSFT', '100')]);
    expect(total).toEqual({
      currency: 'USD',
      cash: '10000.00',
      marketValue: '15000.00',
      equity: '25000.00',
      initialRequirement: '7500.00',
      maintenanceRequirement: '3750.00',
      excessLiquidity: '21250.00',
      buyingPower: '35000.00',
    });
  });

  it('rounds requirements to cents once and derives equity, excess and buying power from the shown figures', () => {
    // 26.498 × 150 = 3974.70; 25% = 993.675 → 993.68, so excess is 28974.70 − 993.68 = 27981.02 (not 27981.03).
    const { total } = margin('MARGIN', 'USD', [cash('USD', '25000')], [hold('MSFT', '26.498')]);
    expect(total).toEqual({
      currency: 'USD',
      cash: '25000.00',
      marketValue: '3974.70',
      equity: '28974.70',
      initialRequirement: '1987.35',
      maintenanceRequirement: '993.68',
      excessLiquidity: '27981.02',
      buyingPower: '53974.70',
    });
  });

  it('MARGIN shorts: 50% initial (Reg T 150% of the credit), 30% maintenance of |value|', () => {
    const { total } = margin('MARGIN', 'USD', [cash('USD', '20000')], [hold('TSLA', '-40')]);
    expect(total).toMatchObject({
      marketValue: '-10000.00',
      equity: '10000.00',
      initialRequirement: '5000.00',
      maintenanceRequirement: '3000.00',
      excessLiquidity: '7000.00',
      buyingPower: '10000.00',
    });
  });

  it('MARGIN: per currency, and the total in the base currency through USD rates (a debit in one currency offsets the other)', () => {
    const result = margin('MARGIN', 'USD', [cash('EUR', '-500'), cash('USD', '1000')], [hold('SAP', '10', 'EUR')]);
    expect(result.byCurrency).toEqual([
      {
        currency: 'EUR',
        cash: '-500.00',
        marketValue: '2000.00',
        equity: '1500.00',
        initialRequirement: '1000.00',
        maintenanceRequirement: '500.00',
        excessLiquidity: '1000.00',
        buyingPower: '1000.00',
      },
      {
        currency: 'USD',
        cash: '1000.00',
        marketValue: '0.00',
        equity: '1000.00',
        initialRequirement: '0.00',
        maintenanceRequirement: '0.00',
        excessLiquidity: '1000.00',
        buyingPower: '2000.00',
      },
    ]);
    // EUR at 1.1: cash 1000 − 550, value 2200, initial 1100, maintenance 550.
    expect(result.total).toEqual({
      currency: 'USD',
      cash: '450.00',
      marketValue: '2200.00',
      equity: '2650.00',
      initialRequirement: '1100.00',
      maintenanceRequirement: '550.00',
      excessLiquidity: '2100.00',
      buyingPower: '3100.00',
    });
  });

  it('converts through cross rates into a non-USD base, rounding only the shown figure', () => {
    // 100 GBP × 1.25 / 1.1 = 113.6363… EUR; 3 × 113.6363… = 340.909… (not 3 × 113.64 = 340.92).
    const { total } = margin('CASH', 'EUR', [cash('GBP', '100'), cash('GBP', '200')], []);
    expect(total).toMatchObject({ currency: 'EUR', cash: '340.91', buyingPower: '340.91' });
  });

  it('CASH buying power: each currency never below zero; the total nets every currency first', () => {
    const result = margin('CASH', 'USD', [cash('EUR', '100', '-10'), cash('USD', '50', '40')], []);
    expect(result.byCurrency.map((f) => f.buyingPower)).toEqual(['0.00', '40.00']);
    expect(result.total.buyingPower).toBe('29.00'); // 40 USD − 10 EUR × 1.1
  });

  it('an empty account has zero figures and no currencies', () => {
    const result = margin('MARGIN', 'GBP', [], []);
    expect(result.byCurrency).toEqual([]);
    expect(result.total).toEqual({
      currency: 'GBP',
      cash: '0.00',
      marketValue: '0.00',
      equity: '0.00',
      initialRequirement: '0.00',
      maintenanceRequirement: '0.00',
      excessLiquidity: '0.00',
      buyingPower: '0.00',
    });
  });

  it('refuses to value with a missing FX rate or a holding the market does not price', () => {
    expect(() => margin('CASH', 'USD', [cash('CHF', '1')], [])).toThrow('no USD rate for CHF');
    expect(() => margin('CASH', 'USD', [], [hold('NOPE', '1')])).toThrow('no mark for NOPE');
    expect(() => margin('CASH', 'USD', [], [hold('SAP', '1', 'USD')])).toThrow('priced in EUR');
  });
});
