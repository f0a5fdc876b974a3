import { FEDERATION_HEADER } from '@trading/subgraph';
import { accountsTypeDefs } from './accounts/accounts.graphql';
import { positionsTypeDefs } from './positions/positions.graphql';
import { settlementTypeDefs } from './settlement/settlement.graphql';
import { valuationTypeDefs } from './valuation/valuation.graphql';

/** This subgraph's SDL, feature by feature; the supergraph tool composes from it. */
export const accountsSubgraphSdl = [FEDERATION_HEADER, accountsTypeDefs, positionsTypeDefs, valuationTypeDefs, settlementTypeDefs];
