import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FEDERATION_HEADER, SCALARS_SDL } from '@trading/subgraph';

/**
 * The SDL files sit beside their resolvers and are read once, when this module loads, by path
 * from this folder: the same in every way the subgraph runs from source (tsx, jest, the supergraph
 * and codegen tools). An app's esbuild bundle is one main.js with no source folder, so its build
 * copies them, folders kept, to `banking-service/` next to main.js (the "assets" of apps/banking
 * and apps/platform project.json), and they are read from there.
 */
const bundled = join(__dirname, 'banking-service');
const SDL_ROOT = existsSync(bundled) ? bundled : __dirname;
const sdl = (path: string): string => readFileSync(join(SDL_ROOT, path), 'utf8');

/** This subgraph's SDL, feature by feature; the supergraph tool composes from it. */
export const bankingSubgraphSdl = [
  FEDERATION_HEADER,
  SCALARS_SDL,
  sdl('balances/balances.graphql'),
  sdl('activity/activity.graphql'),
  sdl('funding/funding.graphql'),
  sdl('sandbox/sandbox.graphql'),
];
