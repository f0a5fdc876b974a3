import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, Kind } from 'graphql';

/**
 * Refuses a document whose operation cannot be chosen (an `operationName` it does not define, or
 * several operations and no name) with a 400 that says which, before the gateway plans anything.
 * The gateway's executor would otherwise throw on it, and Apollo answers a thrown executor with 500.
 */
export function operationResolution(): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, request }) {
          if (operation) return;
          const count = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length;
          const message = request.operationName
            ? `Unknown operation named "${request.operationName}"`
            : count > 1
              ? 'The document has several operations: name the one to run in operationName'
              : 'The document has no operation to run';
          throw new GraphQLError(message, { extensions: { code: 'OPERATION_RESOLUTION_FAILURE', http: { status: 400 } } });
        },
      };
    },
  };
}
