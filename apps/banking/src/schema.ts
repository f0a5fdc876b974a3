import { FEDERATION_HEADER } from '@trading/subgraph';
import { balancesTypeDefs } from './balances/balances.graphql';

/** This subgraph's SDL, feature by feature; the supergraph tool composes from it. */
export const bankingSubgraphSdl = [FEDERATION_HEADER, balancesTypeDefs];
