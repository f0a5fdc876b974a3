export const ordersTypeDefs = /* GraphQL */ `
  enum OrderSide {
    BUY
    SELL
  }

  enum OrderType {
    MARKET
    LIMIT
    STOP
    STOP_LIMIT
  }

  enum TimeInForce {
    "Until the end of the trading session it was placed in (then EXPIRED)."
    DAY
    "Good till cancelled."
    GTC
    "Immediate or cancel: fill what can be filled at once, cancel the rest."
    IOC
    "Fill or kill: fill entirely at once, or cancel."
    FOK
  }

  "ACCEPTED (recorded, reserving buying power) → NEW (working) → PARTIALLY_FILLED → FILLED; or CANCELLED, EXPIRED, REJECTED."
  enum OrderStatus {
    ACCEPTED
    NEW
    PARTIALLY_FILLED
    FILLED
    CANCELLED
    REJECTED
    EXPIRED
  }

  "An order. Decimals are strings (money with the currency's decimals); times RFC 3339 UTC, one per transition."
  type Order {
    id: ID!
    accountId: ID!
    "Unique per account; generated when the client gives none."
    clientOrderId: String!
    symbol: String!
    "ISO 4217: the instrument's currency."
    currency: String!
    side: OrderSide!
    type: OrderType!
    timeInForce: TimeInForce!
    quantity: String!
    filledQuantity: String!
    remainingQuantity: String!
    limitPrice: String
    stopPrice: String
    averageFillPrice: String
    "Sum of the fills' gross amounts."
    grossAmount: String!
    "Sum of the fills' commissions."
    commission: String!
    "Cash reserved in banking for a buy (null for sells)."
    reservedAmount: String
    status: OrderStatus!
    "Why the order is REJECTED, CANCELLED or EXPIRED."
    statusReason: String
    createdAt: String!
    updatedAt: String!
    "When it started working (NEW)."
    submittedAt: String
    "When a stop order's stop price was reached."
    triggeredAt: String
    filledAt: String
    cancelledAt: String
    expiredAt: String
    rejectedAt: String
    "When a DAY order expires."
    expiresAt: String
    "The order's executions, oldest first."
    fills: [Trade!]!
  }

  "One execution (fill). netAmount is the signed cash effect: negative for buys (gross + commission), positive for sells (gross − commission)."
  type Trade {
    id: ID!
    orderId: ID!
    accountId: ID!
    symbol: String!
    side: OrderSide!
    quantity: String!
    price: String!
    currency: String!
    grossAmount: String!
    commission: String!
    netAmount: String!
    executedAt: String!
  }

  type OrderConnection {
    nodes: [Order!]!
    nextCursor: String
  }

  type TradeConnection {
    nodes: [Trade!]!
    nextCursor: String
  }

  type TimeInForceRule {
    type: OrderType!
    timesInForce: [TimeInForce!]!
  }

  "Per-instrument trading rules."
  type InstrumentRule {
    symbol: String!
    name: String!
    currency: String!
    "Prices must be multiples of it."
    tickSize: String!
    "Quantities must be multiples of it."
    lotSize: String!
    minQuantity: String!
    maxQuantity: String!
    "Whether quantities below one unit are possible."
    fractional: Boolean!
    tradable: Boolean!
    lastPrice: String!
  }

  "What this account may send."
  type OrderRules {
    accountId: ID!
    orderTypes: [OrderType!]!
    timesInForce: [TimeInForce!]!
    "Which times in force each order type accepts."
    timeInForceByType: [TimeInForceRule!]!
    shortSellingAllowed: Boolean!
    marketOpen: Boolean!
    "'always open' or 'HH:MM-HH:MM UTC'."
    tradingHours: String!
    "Commission as a fraction of the traded value."
    commissionRate: String!
    "The least an order that trades pays in commission, in the instrument's currency."
    minimumCommission: String!
    "Limit and stop prices must lie within this fraction of the last price."
    priceBand: String!
    "Working orders one account may have at once."
    maxOpenOrders: Int!
    "Market and stop buys reserve (and never pay more than) the reference price × (1 + collar)."
    marketOrderCollar: String!
    instruments: [InstrumentRule!]!
  }

  type Change {
    before: String!
    change: String!
    after: String!
  }

  type MarginImpact {
    initialRequirementChange: String!
    maintenanceRequirementChange: String!
  }

  type WhatIfRejectReason {
    field: String!
    message: String!
  }

  "What an order would do if placed now; nothing is changed. Money in the instrument's currency."
  type WhatIfResult {
    accountId: ID!
    symbol: String!
    side: OrderSide!
    type: OrderType!
    timeInForce: TimeInForce!
    quantity: String!
    currency: String!
    lastPrice: String!
    estimatedPrice: String!
    estimatedGrossAmount: String!
    estimatedCommission: String!
    "Gross plus commission for a buy, gross minus commission for a sell."
    estimatedTotal: String!
    "What placing it would hold in banking (buys)."
    reservedAmount: String!
    "Cash (settled + unsettled, including held) once it fills at the estimate."
    cash: Change!
    "Available to trade, after the order's reservation."
    buyingPower: Change!
    margin: MarginImpact!
    "Sells: the quantity available to sell."
    position: Change
    wouldBeRejected: Boolean!
    rejectReasons: [WhatIfRejectReason!]!
    warnings: [String!]!
  }

  input OrderInput {
    accountId: ID!
    symbol: String!
    side: String!
    type: String!
    timeInForce: String!
    quantity: String!
    limitPrice: String
    stopPrice: String
    clientOrderId: String
  }

  type Account @key(fields: "id") {
    id: ID!
    "The account's orders, newest first; from/to filter the creation time."
    orders(limit: Int, cursor: String, from: String, to: String, status: OrderStatus): OrderConnection!
    "One order of this account (null for another account's order)."
    order(id: ID!): Order
    "Executions, newest first."
    trades(limit: Int, cursor: String, from: String, to: String, symbol: String): TradeConnection!
    orderRules(symbol: String): OrderRules!
  }

  type Mutation {
    "A preview: estimated price, costs and the change to cash and buying power; changes nothing (needs read:orders)."
    whatIfOrder(input: OrderInput!): WhatIfResult!
    placeOrder(input: OrderInput!, idempotencyKey: String): Order!
    "Cancels a working order and releases its hold; cancelling a cancelled order answers it again."
    cancelOrder(orderId: ID!): Order!
  }
`;
