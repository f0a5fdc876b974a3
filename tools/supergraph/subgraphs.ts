import { accountsSubgraphSdl } from '../../libs/accounts-service/src/schema';
import { bankingSubgraphSdl } from '../../libs/banking-service/src/schema';
import { omsSubgraphSdl } from '../../libs/oms-service/src/schema';

/**
 * The subgraphs of the supergraph, with their default URLs. The gateway replaces these URLs
 * with its configured ones at run time, so the composed file is the same in every deployment.
 */
export const SUBGRAPHS = [
  { name: 'accounts', url: 'http://localhost:4001/graphql', sdl: accountsSubgraphSdl },
  { name: 'banking', url: 'http://localhost:4002/graphql', sdl: bankingSubgraphSdl },
  { name: 'oms', url: 'http://localhost:4003/graphql', sdl: omsSubgraphSdl },
];
