// Margin and portfolios are computed here from this subgraph's positions plus banking's cash
// and oms's marks, which the gateway fetches first (@requires). The types below declare only the
// fields this subgraph reads; they belong to banking (CashBalance) and oms (the market).
const VALUATION_INPUTS =
  'cashForValuation { currency cash availableToTrade } market { prices { symbol currency lastPrice previousClose } fxRates { currency usdRate } }';

export const valuationTypeDefs = /* GraphQL */ `
  type CashBalance {
    currency: String! @external
    cash: String! @external
    availableToTrade: String! @external
  }

  type MarketSnapshot {
    prices: [Mark!]! @external
    fxRates: [FxRate!]! @external
  }

  type Mark {
    symbol: String! @external
    currency: String! @external
    lastPrice: String! @external
    previousClose: String! @external
  }

  type FxRate {
    currency: String! @external
    usdRate: String! @external
  }

  "Margin figures in one currency. Money with two decimals."
  type MarginFigures {
    "ISO 4217"
    currency: String!
    cash: String!
    "Σ quantity × last price; shorts count negative."
    marketValue: String!
    "cash + marketValue"
    equity: String!
    initialRequirement: String!
    maintenanceRequirement: String!
    "equity − maintenanceRequirement"
    excessLiquidity: String!
    "CASH: cash available to trade. MARGIN: max(0, equity − initialRequirement) / 0.5."
    buyingPower: String!
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
    asOf: String!
  }

  "The cash and holdings in one currency."
  type Portfolio {
    "ISO 4217"
    currency: String!
    cash: String!
    marketValue: String!
    "cash + marketValue"
    totalValue: String!
    totalValueInBase: String!
    "Share of the account's total value; the portfolios' shares add up to 100.00."
    allocationPercent: String!
    "Σ quantity × (last price − previous close)"
    dayChange: String!
    "dayChange against the value at the previous close, in percent."
    dayChangePercent: String!
    positionCount: Int!
  }

  type PortfolioSummary {
    "ISO 4217"
    baseCurrency: String!
    "In the base currency."
    totalValue: String!
    "In the base currency."
    dayChange: String!
    dayChangePercent: String!
    "One per currency, ordered by currency."
    portfolios: [Portfolio!]!
    "RFC 3339, UTC"
    asOf: String!
  }

  extend type Account {
    cashForValuation: [CashBalance!]! @external
    market: MarketSnapshot! @external
    margin: Margin! @requires(fields: "${VALUATION_INPUTS}")
    portfolios: PortfolioSummary! @requires(fields: "${VALUATION_INPUTS}")
  }
`;
