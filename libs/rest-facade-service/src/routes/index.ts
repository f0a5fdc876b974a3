import { accountsRoutes } from './accounts.routes';
import { bankingRoutes } from './banking.routes';
import { marketRoutes } from './market.routes';
import { ordersRoutes } from './orders.routes';
import { sandboxRoutes } from './sandbox.routes';
import type { RestRoute } from './route';

/** Every REST path the facade serves, by domain. */
export const ROUTES: RestRoute[] = [...accountsRoutes, ...bankingRoutes, ...ordersRoutes, ...marketRoutes, ...sandboxRoutes];
