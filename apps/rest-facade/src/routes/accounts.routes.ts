import type { RestRoute } from './route';

export const accountsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/accounts',
    scopes: ['read:accounts'],
    document: /* GraphQL */ `
      query Accounts {
        accounts { id number type status baseCurrency createdAt }
      }
    `,
    shape: (data) => ({ accounts: data.accounts }),
  },
];
