// Margin and portfolios are computed here from this subgraph's positions plus banking's cash
// and oms's marks, which the gateway fetches first (@requires). The types below declare only the
// fields this subgraph reads; they belong to banking (CashBalance) and oms (the market).
const VALUATION_INPUTS =
  'cashForValuation { currency cash availableToTrade } market { prices { symbol currency lastPrice previousClose } fxRates { currency usdRate } }';

export const valuationTypeDefs = /* GraphQL */ `
  type CashBalance {
    currency: String! @external
    cash: Decimal! @external
    availableToTrade: Decimal! @external
  }

  type MarketSnapshot {
    prices: [Mark!]! @external
    fxRates: [FxRate!]! @external
  }

  type Mark {
    symbol: String! @external
    currency: String! @external
    lastPrice: Decimal! @external
    previousClose: Decimal! @external
  }

  type FxRate {
    currency: String! @external
    usdRate: Decimal! @external
  }

  "Margin figures in one currency. Money with two decimals."
  type MarginFigures {
    "ISO 4217"
    currency: String!
    "Cash, settled and unsettled."
    cash: Decimal!
    "Σ quantity × last price; shorts count negative."
    marketValue: Decimal!
    "cash + marketValue"
    equity: Decimal!
    "Equity needed to open the holdings (the rates: see Margin)."
    initialRequirement: Decimal!
    "Equity needed to keep the holdings (see Margin)."
    maintenanceRequirement: Decimal!
    "equity − maintenanceRequirement"
    excessLiquidity: Decimal!
    "CASH: cash available to trade. MARGIN: max(0, equity − initialRequirement) / 0.5."
    buyingPower: Decimal!
  }

  """
  An account's margin. CASH accounts: initial = maintenance = 100% of market value. MARGIN
  accounts (Reg T): initial 50%, maintenance 25% of long value (30% of short value).
  """
  type Margin {
    "ISO 4217"
    baseCurrency: String!
    "Every currency converted to the base currency through USD cross rates."
    total: MarginFigures!
    "One entry per currency with cash or holdings, ordered by currency."
    byCurrency: [MarginFigures!]!
    "RFC 3339, UTC"
    asOf: DateTime!
  }

  "The cash and holdings in one currency."
  type Portfolio {
    "ISO 4217"
    currency: String!
    "Cash in this currency."
    cash: Decimal!
    "Σ quantity × last price of the holdings in this currency."
    marketValue: Decimal!
    "cash + marketValue"
    totalValue: Decimal!
    "totalValue converted to the account's base currency."
    totalValueInBase: Decimal!
    "Share of the account's total value; the portfolios' shares add up to 100.00."
    allocationPercent: Decimal!
    "Σ quantity × (last price − previous close)"
    dayChange: Decimal!
    "dayChange against the value at the previous close, in percent."
    dayChangePercent: Decimal!
    "Holdings in this currency."
    positionCount: Int!
  }

  "An account's holdings and cash per currency, with totals in its base currency."
  type PortfolioSummary {
    "ISO 4217"
    baseCurrency: String!
    "In the base currency."
    totalValue: Decimal!
    "In the base currency."
    dayChange: Decimal!
    "dayChange against the value at the previous close, in percent."
    dayChangePercent: Decimal!
    "One per currency, ordered by currency."
    portfolios: [Portfolio!]!
    "RFC 3339, UTC"
    asOf: DateTime!
  }

  extend type Account {
    cashForValuation: [CashBalance!]! @external
    market: MarketSnapshot! @external
    "The account's margin: requirements, excess liquidity and buying power."
    margin: Margin! @requires(fields: "${VALUATION_INPUTS}")
    "The account's holdings and cash per currency, with totals."
    portfolios: PortfolioSummary! @requires(fields: "${VALUATION_INPUTS}")
  }
`;
