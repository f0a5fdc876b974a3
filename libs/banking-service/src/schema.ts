import { FEDERATION_HEADER } from '@trading/subgraph';
import { activityTypeDefs } from './activity/activity.graphql';
import { balancesTypeDefs } from './balances/balances.graphql';
import { fundingTypeDefs } from './funding/funding.graphql';

/** This subgraph's SDL, feature by feature; the supergraph tool composes from it. */
export const bankingSubgraphSdl = [FEDERATION_HEADER, balancesTypeDefs, activityTypeDefs, fundingTypeDefs];
