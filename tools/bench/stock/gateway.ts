/**
 * Stock `@apollo/gateway` in `@apollo/server`'s startStandaloneServer, on a supergraph composed
 * at start with `@apollo/composition` (Apollo's advice over IntrospectAndCompose): PORT, SUBGRAPH_URL.
 */
import { composeServices } from '@apollo/composition';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { typeDefs } from './schema';

async function main() {
  const composed = composeServices([{ name: 'accounts', url: process.env['SUBGRAPH_URL']!, typeDefs }]);
  if (composed.errors) throw new Error(composed.errors.map((e) => e.message).join('\n'));
  const server = new ApolloServer({ gateway: new ApolloGateway({ supergraphSdl: composed.supergraphSdl }) });
  await startStandaloneServer(server, { listen: { port: Number(process.env['PORT']), host: '127.0.0.1' } });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
