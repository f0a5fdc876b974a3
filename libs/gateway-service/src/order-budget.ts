import type { ApolloServerPlugin } from '@apollo/server';
import { Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { GatewayContext } from './context';

/**
 * The root fields that place orders; each one the operation would run costs one unit of the
 * order budgets (a replace places its replacement, a close its sell; closing every position is charged one, as what it
 * places is not known before it runs).
 */
const ORDER_PLACING_FIELDS: ReadonlySet<string> = new Set(['placeOrder', 'replaceOrder', 'closePosition', 'closeAllPositions']);

/**
 * Charges the order budgets by what the operation would run, once it is parsed and validated
 * and before it is planned: every order-placing field (`placeOrder`, `replaceOrder`, `closePosition`, `closeAllPositions`) under its own response key (aliases), inside
 * named or inline fragments too. A persisted query (hash only) is charged the same way, as its
 * stored text is what gets parsed. Over budget, the whole operation is refused and none of it runs.
 */
export function orderBudget(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, contextValue }) {
          const count = operation ? placeOrderCount(document, operation) : 0;
          if (count > 0) await contextValue.chargeOrders(count);
        },
      };
    },
  };
}

/**
 * Distinct response keys of order-placing fields at the root of a mutation: fields under one key are
 * merged and run once, so that is exactly how many orders the operation would place
 * (`@skip`/`@include` are not evaluated: at worst an order too many is charged).
 */
export function placeOrderCount(document: DocumentNode, operation: OperationDefinitionNode): number {
  if (operation.operation !== 'mutation') return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const keys = new Set<string>();
  const visited = new Set<string>();
  const collect = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (ORDER_PLACING_FIELDS.has(selection.name.value)) keys.add(selection.alias?.value ?? selection.name.value);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet);
      } else {
        const fragment = fragments.get(selection.name.value);
        // Validation has refused cycles already; the guard only keeps a spread used twice from being walked twice.
        if (fragment && !visited.has(fragment.name.value)) {
          visited.add(fragment.name.value);
          collect(fragment.selectionSet);
        }
      }
    }
  };
  collect(operation.selectionSet);
  return keys.size;
}
