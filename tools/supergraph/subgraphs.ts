import { accountsSubgraphSdl } from '@trading/accounts-service';
import { bankingSubgraphSdl } from '@trading/banking-service';
import { omsSubgraphSdl } from '@trading/oms-service';

/**
 * The subgraphs of the supergraph, with their default URLs. The gateway replaces these URLs
 * with its configured ones at run time, so the composed file is the same in every deployment.
 */
export const SUBGRAPHS = [
  { name: 'accounts', url: 'http://localhost:4001/graphql', sdl: accountsSubgraphSdl },
  { name: 'banking', url: 'http://localhost:4002/graphql', sdl: bankingSubgraphSdl },
  { name: 'oms', url: 'http://localhost:4003/graphql', sdl: omsSubgraphSdl },
];
