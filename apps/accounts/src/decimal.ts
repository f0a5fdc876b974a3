import Decimal from 'decimal.js';

/**
 * The decimal arithmetic of this subgraph: 64 significant digits, so products of two
 * numeric(20, 8) values and FX cross rates are exact, and half-up rounding only when a figure
 * is shown. Never JavaScript numbers for money or quantities.
 */
export const D = Decimal.clone({ precision: 64, rounding: Decimal.ROUND_HALF_UP });
export type Dec = InstanceType<typeof D>;

/**
 * Money rounded to cents, half-up. Figures are rounded once, at the line (a position's value,
 * a requirement, a converted amount); sums and differences are then taken of rounded figures,
 * so what a client sees adds up (equity = cash + marketValue to the cent).
 */
export const cents = (value: Dec | string): Dec => new D(value).toDecimalPlaces(2);

/** Money on the wire: two decimals, half-up. */
export const money = (value: Dec | string): string => new D(value).toFixed(2);

/** Prices and quantities on the wire: the canonical decimal (numeric comes back padded, 10.00000000 → 10). */
export const canonical = (value: Dec | string): string => new D(value).toString();
