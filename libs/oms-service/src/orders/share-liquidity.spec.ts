import Decimal from 'decimal.js';
import { shareLiquidity } from './fills';

const share = (pool: string, lot: string, demands: string[], first = 0) =>
  shareLiquidity(
    pool,
    lot,
    demands.map((d) => new Decimal(d)),
    first,
  ).map((d) => d.toFixed());

/** How one pass's liquidity on one symbol and side is split across the accounts with orders there. */
describe('shareLiquidity', () => {
  it('gives equal shares to accounts that want more than their share', () => {
    expect(share('1000', '1', ['500000', '600'])).toEqual(['500', '500']);
  });

  it('hands on what a small account leaves, and never gives more than asked', () => {
    expect(share('1000', '1', ['500000', '10'])).toEqual(['990', '10']);
    expect(share('1000', '1', ['100', '10', '30'])).toEqual(['100', '10', '30']);
    expect(share('1000', '1', ['900', '10', '300'])).toEqual(['690', '10', '300']);
  });

  it('gives the odd lots one each in turn, starting where the pass says, and never overdraws the pool', () => {
    expect(share('1000', '1', ['5000', '5000', '5000'], 0)).toEqual(['334', '333', '333']);
    expect(share('1000', '1', ['5000', '5000', '5000'], 1)).toEqual(['333', '334', '333']);
    expect(share('2', '1', ['5', '5', '5'], 2)).toEqual(['1', '0', '1']);
  });

  it('keeps to the lot size', () => {
    expect(share('1000', '100', ['5000', '5000', '5000'], 0)).toEqual(['400', '300', '300']);
    expect(share('7', '0.5', ['10', '10'])).toEqual(['3.5', '3.5']);
    expect(share('50', '100', ['5000'])).toEqual(['0']);
  });

  it('gives nothing to accounts that want nothing', () => {
    expect(share('1000', '1', ['0', '20'])).toEqual(['0', '20']);
    expect(share('1000', '1', [])).toEqual([]);
  });
});
