export const ordersTypeDefs = /* GraphQL */ `
  "Buy or sell."
  enum OrderSide {
    "Buy."
    BUY
    "Sell (only what the account holds: see OrderRules.shortSellingAllowed)."
    SELL
  }

  "How the order is priced."
  enum OrderType {
    "At the market price, within the market order collar."
    MARKET
    "At limitPrice or better."
    LIMIT
    "A market order once the stop price is reached."
    STOP
    "A limit order once the stop price is reached."
    STOP_LIMIT
    "A stop that trails the best price seen (trailPrice or trailPercent away): a market order once the price comes back to it."
    TRAILING_STOP
  }

  "SIMPLE: one order. BRACKET: an entry with a take-profit and a stop-loss that start when it fills and cancel each other. OCO: a LIMIT leg and a stop leg that cancel each other (a partial fill of a sell leg reduces the other to the same remainder). OTO: an entry and one child that starts when it fills."
  enum OrderClass {
    "One order."
    SIMPLE
    "Entry + takeProfit + stopLoss."
    BRACKET
    "One cancels the other: the order (LIMIT) and its stopLoss leg."
    OCO
    "One triggers the other: an entry and takeProfit or stopLoss."
    OTO
  }

  "Which exit a child order is."
  enum OrderLeg {
    "The LIMIT exit."
    TAKE_PROFIT
    "The STOP (or STOP_LIMIT) exit."
    STOP_LOSS
  }

  "A take-profit child: a LIMIT order on the other side."
  input TakeProfitInput {
    "On the tick."
    limitPrice: Decimal!
  }

  "A stop-loss child: a STOP order on the other side (STOP_LIMIT with limitPrice)."
  input StopLossInput {
    "On the tick."
    stopPrice: Decimal!
    "Makes it a STOP_LIMIT."
    limitPrice: Decimal
  }

  "Orders by where they are in their life, for the list."
  enum OrderStatusGroup {
    "Not done yet: ACCEPTED, PENDING, NEW, PARTIALLY_FILLED."
    OPEN
    "Done: FILLED, CANCELLED, REJECTED, EXPIRED."
    CLOSED
    "Every order."
    ALL
  }

  "How long an order works."
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
    "Recorded, reserving buying power; not yet working."
    ACCEPTED
    "A BRACKET or OTO child waiting for its entry to fill (then NEW; cancelled if the entry ends otherwise)."
    PENDING
    "Working, nothing filled yet."
    NEW
    "Working, partly filled."
    PARTIALLY_FILLED
    "Completely filled."
    FILLED
    "Cancelled by the owner (or the rest of an IOC/FOK order)."
    CANCELLED
    "Refused: see statusReason."
    REJECTED
    "A DAY order the session ended."
    EXPIRED
  }

  "An order. Decimals are strings (money with the currency's decimals); times RFC 3339 UTC, one per transition."
  type Order {
    "The order id (UUID)."
    id: ID!
    "The account it trades for."
    accountId: ID!
    "Unique per account; generated when the client gives none."
    clientOrderId: String!
    "The instrument."
    symbol: String!
    "ISO 4217: the instrument's currency."
    currency: String!
    "Buy or sell."
    side: OrderSide!
    "How it is priced."
    type: OrderType!
    "How long it works."
    timeInForce: TimeInForce!
    "Ordered quantity."
    quantity: Decimal!
    "Quantity filled so far."
    filledQuantity: Decimal!
    "quantity − filledQuantity while working; 0 once done."
    remainingQuantity: Decimal!
    "LIMIT and STOP_LIMIT orders."
    limitPrice: Decimal
    "STOP and STOP_LIMIT orders; a TRAILING_STOP's current stop."
    stopPrice: Decimal
    "Quantity-weighted price of the fills; null before the first."
    averageFillPrice: Decimal
    "Sum of the fills' gross amounts."
    grossAmount: Decimal!
    "Sum of the fills' commissions."
    commission: Decimal!
    "Cash reserved in banking for a buy (null for sells)."
    reservedAmount: Decimal
    "Where it is in its life."
    status: OrderStatus!
    "Why the order is REJECTED, CANCELLED or EXPIRED."
    statusReason: String
    "When it was placed."
    createdAt: DateTime!
    "When it last changed."
    updatedAt: DateTime!
    "When it started working (NEW)."
    submittedAt: DateTime
    "When a stop order's stop price was reached."
    triggeredAt: DateTime
    "When it was completely filled."
    filledAt: DateTime
    "When it was cancelled."
    cancelledAt: DateTime
    "When it expired."
    expiredAt: DateTime
    "When it was rejected."
    rejectedAt: DateTime
    "When a DAY order expires."
    expiresAt: DateTime
    "TRAILING_STOP: the trail as a price distance."
    trailPrice: Decimal
    "TRAILING_STOP: the trail as a percentage of the water mark."
    trailPercent: Decimal
    "TRAILING_STOP: the best price since it started working (the highest for a sell, the lowest for a buy); stopPrice trails it."
    highWaterMark: Decimal
    "SIMPLE, BRACKET, OCO or OTO."
    orderClass: OrderClass!
    "A child's entry order (or an OCO leg's first leg)."
    parentOrderId: ID
    "Which exit a child is."
    leg: OrderLeg
    "This order's children: a bracket's exits, an OTO's child, an OCO's other leg."
    legs: [Order!]!
    "The order this one replaced (replaceOrder)."
    replaces: ID
    "The order that replaced this one (it is CANCELLED, 'Replaced by order …'); set while the replace is under way too."
    replacedBy: ID
    "The order's executions, oldest first."
    fills: [Trade!]!
  }

  "One execution (fill). netAmount is the signed cash effect: negative for buys (gross + commission), positive for sells (gross − commission)."
  type Trade {
    "The execution id (UUID)."
    id: ID!
    "The order it fills."
    orderId: ID!
    "The account it trades for."
    accountId: ID!
    "The instrument."
    symbol: String!
    "Buy or sell."
    side: OrderSide!
    "Quantity executed."
    quantity: Decimal!
    "Execution price."
    price: Decimal!
    "ISO 4217: the instrument's currency."
    currency: String!
    "quantity × price."
    grossAmount: Decimal!
    "Commission charged for this fill."
    commission: Decimal!
    "Signed cash effect (see the type)."
    netAmount: Decimal!
    "When it executed."
    executedAt: DateTime!
  }

  "One page of orders."
  type OrderConnection {
    "The orders on this page."
    nodes: [Order!]!
    "Null on the last page."
    nextCursor: String
  }

  "One page of executions."
  type TradeConnection {
    "The executions on this page."
    nodes: [Trade!]!
    "Null on the last page."
    nextCursor: String
  }

  "The times in force one order type accepts."
  type TimeInForceRule {
    "The order type."
    type: OrderType!
    "What it accepts."
    timesInForce: [TimeInForce!]!
  }

  "Per-instrument trading rules."
  type InstrumentRule {
    "The instrument."
    symbol: String!
    "Its name."
    name: String!
    "ISO 4217"
    currency: String!
    "Prices must be multiples of it."
    tickSize: Decimal!
    "Quantities must be multiples of it."
    lotSize: Decimal!
    "Smallest quantity one order may have."
    minQuantity: Decimal!
    "Largest quantity one order may have."
    maxQuantity: Decimal!
    "Whether quantities below one unit are possible."
    fractional: Boolean!
    "Whether orders are accepted."
    tradable: Boolean!
    "The paper market's last price."
    lastPrice: Decimal!
  }

  "What this account may send."
  type OrderRules {
    "The account the rules are for."
    accountId: ID!
    "Order types it may send."
    orderTypes: [OrderType!]!
    "Order classes it may send."
    orderClasses: [OrderClass!]!
    "Times in force it may use."
    timesInForce: [TimeInForce!]!
    "Which times in force each order type accepts."
    timeInForceByType: [TimeInForceRule!]!
    "Whether it may sell what it does not hold (never yet, in this paper market)."
    shortSellingAllowed: Boolean!
    "Whether the market is open now."
    marketOpen: Boolean!
    "'always open' or 'HH:MM-HH:MM UTC'."
    tradingHours: String!
    "Commission as a fraction of the traded value."
    commissionRate: Decimal!
    "The least an order that trades pays in commission, in the instrument's currency."
    minimumCommission: Decimal!
    "Limit and stop prices must lie within this fraction of the last price."
    priceBand: Decimal!
    "Working orders one account may have at once."
    maxOpenOrders: Int!
    "Market and stop buys reserve (and never pay more than) the reference price × (1 + collar)."
    marketOrderCollar: Decimal!
    "The instruments, or the one asked for."
    instruments: [InstrumentRule!]!
  }

  "A figure before and after the order."
  type Change {
    "Now."
    before: Decimal!
    "after − before."
    change: Decimal!
    "Once the order fills at the estimate."
    after: Decimal!
  }

  "How the order changes the margin requirements, in the instrument's currency."
  type MarginImpact {
    "Change of the initial requirement."
    initialRequirementChange: Decimal!
    "Change of the maintenance requirement."
    maintenanceRequirementChange: Decimal!
  }

  "Why the order would be refused."
  type WhatIfRejectReason {
    "The input field at fault."
    field: String!
    "What is wrong, for a person."
    message: String!
  }

  "What an order would do if placed now; nothing is changed. Money in the instrument's currency."
  type WhatIfResult {
    "The account."
    accountId: ID!
    "The instrument."
    symbol: String!
    "Buy or sell."
    side: OrderSide!
    "How it would be priced."
    type: OrderType!
    "How long it would work."
    timeInForce: TimeInForce!
    "The quantity."
    quantity: Decimal!
    "ISO 4217: the instrument's currency."
    currency: String!
    "The paper market's last price."
    lastPrice: Decimal!
    "The price it would likely fill at."
    estimatedPrice: Decimal!
    "quantity × estimatedPrice."
    estimatedGrossAmount: Decimal!
    "The commission it would pay."
    estimatedCommission: Decimal!
    "Gross plus commission for a buy, gross minus commission for a sell."
    estimatedTotal: Decimal!
    "What placing it would hold in banking (buys)."
    reservedAmount: Decimal!
    "Cash (settled + unsettled, including held) once it fills at the estimate."
    cash: Change!
    "Available to trade, after the order's reservation."
    buyingPower: Change!
    "Change of the margin requirements."
    margin: MarginImpact!
    "Sells: the quantity available to sell."
    position: Change
    "SIMPLE, BRACKET, OCO or OTO."
    orderClass: OrderClass!
    "Its children (reservedAmount above includes what the buys among them hold)."
    legs: [WhatIfLeg!]!
    "Whether placing it now would be refused."
    wouldBeRejected: Boolean!
    "Why it would be refused (empty when not)."
    rejectReasons: [WhatIfRejectReason!]!
    "Things worth knowing that do not refuse it."
    warnings: [String!]!
  }

  "An order to place or preview. Decimals are strings; side, type and timeInForce take the enum names (checked with the field named in the error)."
  input OrderInput {
    "One of the caller's accounts."
    accountId: ID!
    "The instrument (e.g. AAPL)."
    symbol: String!
    "BUY or SELL."
    side: String!
    "MARKET, LIMIT, STOP, STOP_LIMIT or TRAILING_STOP."
    type: String!
    "DAY, GTC, IOC or FOK (what the type accepts)."
    timeInForce: String!
    "A multiple of the lot size, within the instrument limits."
    quantity: Decimal!
    "LIMIT and STOP_LIMIT: on the tick."
    limitPrice: Decimal
    "STOP and STOP_LIMIT: on the tick."
    stopPrice: Decimal
    "TRAILING_STOP: the trail as a price distance (on the tick); or trailPercent."
    trailPrice: Decimal
    "TRAILING_STOP: the trail as a percentage (0 < p < 100); or trailPrice."
    trailPercent: Decimal
    "Unique per account (at most 64 characters); generated when absent."
    clientOrderId: String
    "SIMPLE (default), BRACKET, OCO or OTO."
    orderClass: String
    "BRACKET, OTO: the take-profit child."
    takeProfit: TakeProfitInput
    "BRACKET, OTO, OCO: the stop-loss child (an OCO's other leg)."
    stopLoss: StopLossInput
  }

  "A child of a BRACKET, OCO or OTO order, as what-if sees it."
  type WhatIfLeg {
    "Which exit."
    leg: OrderLeg!
    "Its side."
    side: OrderSide!
    "Its type."
    type: OrderType!
    "Its limit."
    limitPrice: Decimal
    "Its stop."
    stopPrice: Decimal
    "Its quantity."
    quantity: Decimal!
    "'the order fills' or 'at once'."
    startsWhen: String!
    "What it would hold in banking (buys)."
    reservedAmount: Decimal!
  }

  "What a replace changes; at least one of quantity, limitPrice, stopPrice, timeInForce, trailPrice, trailPercent. quantity is the new total (fills included) and must exceed what has filled: the replacement carries the remainder. A sell pair's leg (an OCO's, or a bracket's take-profit or stop-loss once the entry has filled) is replaced within its pair; an OTO's child, once it works, is replaced as an order of its own; a bracket's or an OTO's entry, a pair's buy legs and legs still waiting for their entry cannot be replaced."
  input ReplaceOrderInput {
    "The order's account."
    accountId: ID!
    "A working order (NEW or PARTIALLY_FILLED)."
    orderId: ID!
    "The new total quantity."
    quantity: Decimal
    "LIMIT and STOP_LIMIT: the new limit."
    limitPrice: Decimal
    "STOP and STOP_LIMIT: the new stop."
    stopPrice: Decimal
    "What the type accepts; a leg keeps its group's."
    timeInForce: String
    "TRAILING_STOP: a new trail as a price distance (on the tick); or trailPercent, not both."
    trailPrice: Decimal
    "TRAILING_STOP: a new trail as a percentage (0 < p < 100); or trailPrice, not both."
    trailPercent: Decimal
    "The replacement's clientOrderId, unique per account as on placing; generated when absent."
    clientOrderId: String
  }

  "A position to close (long: a MARKET DAY sell). quantity or percentage, not both; neither: all of it that working sells do not already sell."
  input ClosePositionInput {
    "One of the caller's accounts."
    accountId: ID!
    "The instrument held."
    symbol: String!
    "How much to sell (at most the holding not already being sold)."
    quantity: Decimal
    "This percentage (0 < p ≤ 100) of the holding, floored to the lot."
    percentage: Decimal
  }

  type Account @key(fields: "id") {
    "The account id (UUID)."
    id: ID!
    "The account's orders, newest first; from/to filter the creation time; the filters combine."
    orders(
      "Page size: 1..100, default 20." limit: Int
      "The previous page's nextCursor; omit for the first page." cursor: String
      "From: a date (the whole day included) or an RFC 3339 time." from: String
      "Up to: a date (the whole day included) or an RFC 3339 time." to: String
      "Only orders in this status." status: OrderStatus
      "Only open or only closed orders (ALL: no filter)." statusGroup: OrderStatusGroup
      "Only orders in these instruments (1 to 100; an unknown one matches nothing)." symbols: [String!]
    ): OrderConnection!
    "One order of this account (null for another account's order)."
    order("The order id." id: ID!): Order
    "The order of this account placed with this clientOrderId (null when none): how a client finds an order whose placement timed out."
    orderByClientOrderId("As placed (a leg's adds :tp or :sl)." clientOrderId: String!): Order
    "Executions, newest first."
    trades(
      "Page size: 1..100, default 20." limit: Int
      "The previous page's nextCursor; omit for the first page." cursor: String
      "From: a date (the whole day included) or an RFC 3339 time." from: String
      "Up to: a date (the whole day included) or an RFC 3339 time." to: String
      "Only executions in this instrument." symbol: String
    ): TradeConnection!
    "What this account may send: order types, times in force, limits and the instruments' rules."
    orderRules("Only this instrument's rules (all when omitted)." symbol: String): OrderRules!
  }

  type Mutation {
    "A preview: estimated price, costs and the change to cash and buying power; changes nothing (needs read:orders)."
    whatIfOrder("The order to preview." input: OrderInput!): WhatIfResult!
    "Places an order; it reserves buying power at once and starts working when the market is open."
    placeOrder("The order." input: OrderInput!, "An Idempotency-Key: the same key and input answer the first result; another input with it is refused." idempotencyKey: String): Order!
    "Cancels a working order and releases its hold; cancelling a cancelled order answers it again."
    cancelOrder("The order to cancel." orderId: ID!): Order!
    "Cancels the order of one of the caller's accounts placed with this clientOrderId, as cancelOrder does. No such order: NOT_FOUND naming clientOrderId."
    cancelOrderByClientOrderId("One of the caller's accounts." accountId: ID!, "As placed (a leg's adds :tp or :sl)." clientOrderId: String!): Order!
    "Replaces a working order atomically: a new order (replaces = the old id) carries the remainder; the old one is CANCELLED with replacedBy set; a buy's hold grows or shrinks in the same step. Refused: CONFLICT (filled, closed, a fill took what the new quantity would leave) or UNPROCESSABLE naming the field."
    replaceOrder("The order and what changes." input: ReplaceOrderInput!, "An Idempotency-Key, as placeOrder's." idempotencyKey: String): Order!
    "Places the MARKET DAY sell that closes a position (or part of it); sells already working keep their part. No position: NOT_FOUND naming symbol."
    closePosition("What to close." input: ClosePositionInput!, "An Idempotency-Key, as placeOrder's." idempotencyKey: String): Order!
    "Cancels the account's working orders, then closes every position; the orders placed (one per holding)."
    closeAllPositions("One of the caller's accounts." accountId: ID!, "An Idempotency-Key: a retry answers the same orders." idempotencyKey: String): [Order!]!
  }
`;
