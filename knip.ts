import type { KnipConfig } from 'knip';

// Unused files, exports and dependencies, checked by `npm run lint`. The nx plugin reads each
// project.json (jest configs, run-commands scripts, esbuild options) and the jest plugin makes the
// specs entries; package.json scripts (`tsx tools/…`) are entries too. Listed here are only the
// entries nothing declares: files a bundler, a child process or a person runs by path.
const config: KnipConfig = {
  entry: [
    'apps/*/src/main.ts',
    // The one published library's API. The others are reached through their @trading/* paths
    // (tsconfig.base.json), so what no app, tool or spec uses is reported.
    'libs/api-client/src/index.ts',
    // Bundled for the browser by tools/web-assets/build.ts.
    'libs/auth-service/src/web/browser/dashboard.ts',
    'libs/gateway-service/src/explorer/browser/explorer.ts',
    // The api-client package's example, shipped in the package and run by a spec.
    'libs/api-client/examples/*.mjs',
    // Child processes the specs start by path.
    'apps/platform-e2e/src/support/traced-platform.ts',
    'apps/platform-e2e/src/support/fapi-client/*.mjs',
    // The benchmark's child processes.
    'tools/bench/{bare-server,load-generator}.ts',
    'tools/bench/stock/{gateway,subgraph}.ts',
    'tools/bench/oidc-peer/{server,proxy,cluster}.mjs',
    // Regenerates tools/deploy/crds from the operator's release, by hand.
    'tools/deploy/crd-schemas.ts',
    // Mutation testing: Stryker loads its config, which names the Jest config and the groups.
    'tools/mutation/{stryker.config.mjs,jest.config.js,targets.js}',
    // Served to the browser as a static file by the sample vendor app.
    'tools/sample-vendor/public/*.js',
  ],
  project: ['{apps,libs,tools}/**/*.{ts,js,mjs}'],
  ignoreIssues: {
    // Generated (graphql-codegen, openapi-typescript, tools/web-assets): exported whole, by design.
    '**/*.generated.ts': ['exports', 'types'],
    'libs/api-client/src/schema.d.ts': ['exports', 'types'],
    // The REST contract: each named schema registers itself for the OpenAPI document, which refers
    // to it by name, so a schema no module imports is still in use.
    'libs/rest-facade-service/src/contract/*.ts': ['exports'],
  },
  ignoreDependencies: [
    // Nothing imports it, but Nx adds the imports between projects to its project graph only when
    // @nx/js is listed in package.json.
    '@nx/js',
    // Required at run time by @nx/eslint-plugin's flat configs (eslint.config.js), which do not
    // declare it as a dependency.
    'typescript-eslint',
    // Stryker loads its test runner plugin by the name `jest` in tools/mutation/stryker.config.mjs.
    '@stryker-mutator/jest-runner',
  ],
  // Installed from the OS by tools/ci/provision.sh, not from npm.
  ignoreBinaries: ['redis-cli', 'redis-server', 'openssl', 'promtool', 'kubectl', 'haproxy', 'runuser'],
  // The platform resolves the supergraph file at run time: next to the bundle, or in the gateway's
  // source folder.
  ignoreUnresolved: ['./supergraph.graphql'],
  nx: { config: ['nx.json', '{apps,libs,tools}/*/project.json', 'package.json'] },
};

export default config;
