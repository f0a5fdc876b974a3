const nx = require('@nx/eslint-plugin');

const libTypes = ['type:util', 'type:data', 'type:feature'];
// Only the all-in-one launcher (and its end-to-end specs) may import app factories (see README, "Module boundaries").
const appFactories = [
  '@trading/app-auth',
  '@trading/app-gateway',
  '@trading/app-rest-facade',
  '@trading/app-accounts',
  '@trading/app-banking',
  '@trading/app-oms',
];

module.exports = [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  { ignores: ['**/dist', '**/node_modules', '**/.nx', '**/*.graphql', '**/jest.config.js'] },
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: appFactories,
          depConstraints: [
            // Apps depend on libs only; the launcher may also start apps. Production code never
            // imports the test helpers (specs, testing/ and e2e/ folders may: see below).
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: libTypes },
            { sourceTag: 'type:launcher', onlyDependOnLibsWithTags: ['type:app', ...libTypes] },
            // Libs form layers: util ← data ← feature; test helpers sit on top.
            { sourceTag: 'type:feature', onlyDependOnLibsWithTags: libTypes },
            { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:util', 'type:data'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: libTypes },
            // A domain's code imports its own domain and shared code, never another domain's.
            ...['auth', 'gateway', 'rest-facade', 'accounts', 'banking', 'oms'].map((d) => ({
              sourceTag: `scope:${d}`,
              onlyDependOnLibsWithTags: [`scope:${d}`, 'scope:shared'],
            })),
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Specs, and the helpers they share (a testing/ or e2e/ folder), may use the test helpers wherever they live.
    files: ['**/*.spec.ts', '**/testing/**/*.ts', '**/e2e/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: appFactories,
          depConstraints: [{ sourceTag: '*', onlyDependOnLibsWithTags: ['*'] }],
        },
      ],
    },
  },
  {
    // Only the launcher may import another app; no library ever does.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['apps/platform/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@trading/app-*', '../../*/src/*'], message: 'apps never import apps; share code through libs/' }] },
      ],
    },
  },
];
