export const ordersTypeDefs = /* GraphQL */ `
  enum OrderSide {
    BUY
    SELL
  }

  enum OrderStatus {
    NEW
    ACCEPTED
    PARTIALLY_FILLED
    FILLED
    CANCELLED
    REJECTED
    EXPIRED
  }

  "An order. Decimals are strings; times are RFC 3339 UTC."
  type Order {
    id: ID!
    clientOrderId: String!
    symbol: String!
    side: OrderSide!
    type: String!
    timeInForce: String!
    quantity: String!
    limitPrice: String
    status: OrderStatus!
    createdAt: String!
  }

  type Account @key(fields: "id") {
    id: ID!
    "The account's orders, newest first."
    orders: [Order!]!
  }
`;
