import { accountsSubgraphSdl } from '@trading/accounts-service';
import { bankingSubgraphSdl } from '@trading/banking-service';
import { omsSubgraphSdl } from '@trading/oms-service';

/** One subgraph's resolver types: where its SDL comes from and where the generated file goes. */
export interface SubgraphTypes {
  name: string;
  sdl: readonly string[];
  /** Repository-relative path of the generated file. */
  output: string;
  /**
   * What a resolver's parent really is, where that is not the GraphQL type itself (a row, an
   * entity, a federation reference): `./path#Type` relative to the generated file.
   */
  mappers: Record<string, string>;
}

const AccountReference = '@trading/subgraph#AccountReference';

export const SUBGRAPH_TYPES: SubgraphTypes[] = [
  {
    name: 'accounts',
    sdl: accountsSubgraphSdl,
    output: 'libs/accounts-service/src/resolvers-types.generated.ts',
    mappers: {
      Account: './accounts/entities/account.entity#Account',
      Position: './positions/entities/position.entity#Position',
    },
  },
  {
    name: 'banking',
    sdl: bankingSubgraphSdl,
    output: 'libs/banking-service/src/resolvers-types.generated.ts',
    mappers: { Account: AccountReference },
  },
  {
    name: 'oms',
    sdl: omsSubgraphSdl,
    output: 'libs/oms-service/src/resolvers-types.generated.ts',
    mappers: { Account: AccountReference, Order: './orders/order-store#OrderView', Position: './orders/open-sells#HoldingReference' },
  },
];
