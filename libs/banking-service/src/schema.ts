import { FEDERATION_HEADER, SCALARS_SDL } from '@trading/subgraph';
import { activityTypeDefs } from './activity/activity.graphql';
import { balancesTypeDefs } from './balances/balances.graphql';
import { fundingTypeDefs } from './funding/funding.graphql';

/** This subgraph's SDL, feature by feature; the supergraph tool composes from it. */
export const bankingSubgraphSdl = [FEDERATION_HEADER, SCALARS_SDL, balancesTypeDefs, activityTypeDefs, fundingTypeDefs];
