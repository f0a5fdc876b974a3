import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FEDERATION_HEADER, SCALARS_SDL } from '@trading/subgraph';

/**
 * The SDL files sit beside their resolvers and are read once, when this module loads, by path
 * from this folder: the same in every way the subgraph runs from source (tsx, jest, the supergraph
 * and codegen tools). An app's esbuild bundle is one main.js with no source folder, so its build
 * copies them, folders kept, to `oms-service/` next to main.js (the "assets" of apps/oms and
 * apps/platform project.json), and they are read from there.
 */
const bundled = join(__dirname, 'oms-service');
const SDL_ROOT = existsSync(bundled) ? bundled : __dirname;
const sdl = (path: string): string => readFileSync(join(SDL_ROOT, path), 'utf8');

/** This subgraph's SDL, feature by feature; the supergraph tool composes from it. */
export const omsSubgraphSdl = [
  FEDERATION_HEADER,
  SCALARS_SDL,
  sdl('instruments/instruments.graphql'),
  sdl('orders/orders.graphql'),
  sdl('market/market.graphql'),
  sdl('orders/open-sells.graphql'),
  sdl('market-data/market-data.graphql'),
  sdl('sandbox/sandbox.graphql'),
];
