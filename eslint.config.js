const graphql = require('@graphql-eslint/eslint-plugin');
const nx = require('@nx/eslint-plugin');

const libTypes = ['type:util', 'type:data', 'type:feature'];
// A domain's code imports its own domain and shared code, never another domain's: production code and specs alike.
const domainConstraints = [
  ...['auth', 'gateway', 'rest-facade', 'accounts', 'banking', 'oms'].map((d) => ({
    sourceTag: `scope:${d}`,
    onlyDependOnLibsWithTags: [`scope:${d}`, 'scope:shared'],
  })),
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
];

module.exports = [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  { ignores: ['**/dist', '**/node_modules', '**/.nx', 'libs/gateway-service/src/supergraph.graphql', '**/jest.config.js'] },
  {
    // The subgraphs' SDL files, each linted on its own: no rule that needs the whole schema (the
    // federation directives and the types other files or subgraphs own are unknown here).
    files: ['**/*.graphql'],
    languageOptions: { parser: graphql.parser },
    plugins: { '@graphql-eslint': graphql },
    rules: {
      '@graphql-eslint/naming-convention': [
        'error',
        {
          types: 'PascalCase',
          FieldDefinition: 'camelCase',
          InputValueDefinition: 'camelCase',
          EnumValueDefinition: 'UPPER_CASE',
        },
      ],
      '@graphql-eslint/unique-field-definition-names': 'error',
      '@graphql-eslint/unique-enum-value-names': 'error',
      // A `#` comment right above a definition is a description that never reaches the schema.
      '@graphql-eslint/no-hashtag-description': 'error',
      '@graphql-eslint/require-deprecation-reason': 'error',
      // Every type and enum value this subgraph owns is described. Not described here: the root
      // types, the Account entity's other subgraphs' fields (accounts describes the type) and
      // the types a subgraph declares only to read @external fields (their owners describe them).
      '@graphql-eslint/require-description': [
        'error',
        {
          types: true,
          EnumValueDefinition: true,
          ignoredSelectors: ['[name.value=/^(Query|Mutation)$/]', '[name.value="Account"]', ':has(Directive[name.value="external"])'],
        },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          depConstraints: [
            // Apps depend on libs only; the launcher may also start apps. Production code never
            // imports the test helpers (specs, testing/ folders and the e2e project may: see below).
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: libTypes },
            { sourceTag: 'type:launcher', onlyDependOnLibsWithTags: ['type:app', ...libTypes] },
            // Tools (CLIs, generators) use libraries, never an app: what they share with one lives in a lib.
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: libTypes },
            // Test tools drive a running platform from outside (the benchmark, the scale-out proof): they may use the test helpers too.
            { sourceTag: 'type:test-tool', onlyDependOnLibsWithTags: [...libTypes, 'type:testing'] },
            // Libs form layers: util ← data ← feature; test helpers sit on top.
            { sourceTag: 'type:feature', onlyDependOnLibsWithTags: libTypes },
            { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:util', 'type:data'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: libTypes },
            ...domainConstraints,
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Size rules keep every function readable in one screen and testable on its own. Specs are
    // left out: a describe block is a list of tests, long by nature. Generated files are left out.
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.generated.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      complexity: ['error', 15],
    },
  },
  {
    // Specs, and the helpers they share (a testing/ folder, the e2e project), may use the test helpers wherever
    // they live; the domain rules still hold for them.
    files: ['**/*.spec.ts', '**/testing/**/*.ts', 'apps/platform-e2e/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          depConstraints: [{ sourceTag: '*', onlyDependOnLibsWithTags: ['*'] }, ...domainConstraints],
        },
      ],
    },
  },
  {
    // The e2e project starts the all-in-one in its own process, through the surface the app
    // exports for it (apps/platform/src/index.ts); nothing else may import an app.
    files: ['apps/platform-e2e/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: ['@trading/platform'],
          depConstraints: [{ sourceTag: '*', onlyDependOnLibsWithTags: ['*'] }, ...domainConstraints],
        },
      ],
    },
  },
  {
    // A service's code is composed by its own app and the launcher; no library imports one, and
    // nothing reaches into another project's folder by a relative path.
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@trading/*-service'], message: 'a library never imports a service: apps compose them' },
            { group: ['../../*/src/*', '../../../apps/*'], message: 'import a project by its @trading/ name, not by a path into it' },
          ],
        },
      ],
    },
  },
];
