import { FEDERATION_HEADER, SCALARS_SDL } from '@trading/subgraph';
import { instrumentsTypeDefs } from './instruments/instruments.graphql';
import { marketTypeDefs } from './market/market.graphql';
import { marketDataTypeDefs } from './market-data/market-data.graphql';
import { openSellsTypeDefs } from './orders/open-sells';
import { ordersTypeDefs } from './orders/orders.graphql';

/** This subgraph's SDL, feature by feature; the supergraph tool composes from it. */
export const omsSubgraphSdl = [
  FEDERATION_HEADER,
  SCALARS_SDL,
  instrumentsTypeDefs,
  ordersTypeDefs,
  marketTypeDefs,
  openSellsTypeDefs,
  marketDataTypeDefs,
];
