/** The stock chain's one subgraph: the same shape as our `accounts` query, two static accounts, no auth, no database. */
import { parse } from 'graphql';

export const typeDefs = parse(/* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type Account @key(fields: "id") {
    id: ID!
    number: String!
    type: String!
    status: String!
    baseCurrency: String!
    createdAt: String!
  }

  type Query {
    accounts: [Account!]!
  }
`);

const account = (n: 1 | 2, type: string) => ({
  id: `7d1c8a52-3f0e-4a8b-9b1e-2f6a4c1d0e0${n}`,
  number: `TA-00000${n}`,
  type,
  status: 'ACTIVE',
  baseCurrency: 'USD',
  createdAt: `2026-01-02T09:3${n - 1}:00.000Z`,
});
const ACCOUNTS = [account(1, 'CASH'), account(2, 'MARGIN')];

export const resolvers = { Query: { accounts: () => ACCOUNTS } };
