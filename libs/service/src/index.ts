export * from './listeners';
export * from './problems';
export * from './page-headers';
export * from './problem-page';
export * from './server';
export { startPeriodic, type PeriodicTask } from './periodic';
export { Lifecycle } from './lifecycle';
export { callWithin, graphqlEndpoint, serveGraphQL, type GraphQLCall, type GraphQLEndpoint } from './graphql-endpoint';
