/**
 * Stock `@apollo/subgraph` served by `@apollo/server`'s startStandaloneServer, as shipped
 * (inline tracing on, as Apollo Server turns it on for a federated schema): PORT.
 */
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { resolvers, typeDefs } from './schema';

async function main() {
  const server = new ApolloServer({ schema: buildSubgraphSchema({ typeDefs, resolvers }) });
  await startStandaloneServer(server, { listen: { port: Number(process.env['PORT']), host: '127.0.0.1' } });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
