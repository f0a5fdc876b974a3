// `npm run mutation`: StrykerJS mutates the money and access rules one change at a time and
// reruns the specs that cover each change. A mutant no spec notices is a rule that could break
// unseen. Incremental: a rerun tests only mutants whose code or covering specs changed since the
// recorded result in reports/mutation/.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { mutate } = require('./targets.js');

export default {
  packageManager: 'npm',
  testRunner: 'jest',
  jest: { configFile: 'tools/mutation/jest.config.js', enableFindRelatedTests: false },
  coverageAnalysis: 'perTest',
  mutate,
  concurrency: 2,
  incremental: true,
  incrementalFile: 'reports/mutation/incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 85, break: 85 },
  timeoutMS: 20000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['dist', 'coverage', '.nx', 'tmp', '.data', 'reports', '.stryker-tmp', '**/*.log', 'docs', 'deploy'],
};
