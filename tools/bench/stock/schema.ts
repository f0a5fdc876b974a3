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

const ACCOUNTS = [
  {
    id: '7d1c8a52-3f0e-4a8b-9b1e-2f6a4c1d0e01',
    number: 'TA-000001',
    type: 'CASH',
    status: 'ACTIVE',
    baseCurrency: 'USD',
    createdAt: '2026-01-02T09:30:00.000Z',
  },
  {
    id: '7d1c8a52-3f0e-4a8b-9b1e-2f6a4c1d0e02',
    number: 'TA-000002',
    type: 'MARGIN',
    status: 'ACTIVE',
    baseCurrency: 'USD',
    createdAt: '2026-01-02T09:31:00.000Z',
  },
];

export const resolvers = { Query: { accounts: () => ACCOUNTS } };
