import { FEDERATION_HEADER, SCALARS_SDL } from '@trading/subgraph';
import { accountsTypeDefs } from './accounts/accounts.graphql';
import { positionsTypeDefs } from './positions/positions.graphql';
import { settlementTypeDefs } from './settlement/settlement.graphql';
import { valuationTypeDefs } from './valuation/valuation.graphql';

/** This subgraph's SDL, feature by feature; the supergraph tool composes from it. */
export const accountsSubgraphSdl = [
  FEDERATION_HEADER,
  SCALARS_SDL,
  accountsTypeDefs,
  positionsTypeDefs,
  valuationTypeDefs,
  settlementTypeDefs,
];
