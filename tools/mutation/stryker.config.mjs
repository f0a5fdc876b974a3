// One mutation group (MUTATION_GROUP, see targets.js): StrykerJS mutates its rules one change at
// a time and reruns the specs that cover each change. A mutant no spec notices is a rule that
// could break unseen. Incremental: a rerun tests only the mutants whose code or covering specs
// changed since the result recorded in reports/mutation/<group>.json (committed).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const groups = require('./targets.js');
const name = process.env.MUTATION_GROUP ?? '';
if (!groups[name]) throw new Error(`MUTATION_GROUP must be one of ${Object.keys(groups).join(', ')}`);

export default {
  packageManager: 'npm',
  testRunner: 'jest',
  jest: { configFile: 'tools/mutation/jest.config.js', enableFindRelatedTests: false },
  coverageAnalysis: 'perTest',
  mutate: groups[name].mutate,
  concurrency: 2,
  incremental: true,
  incrementalFile: `reports/mutation/${name}.json`,
  // The per-file table on the terminal, and a browsable report beside the committed record.
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  thresholds: { high: 90, low: 85, break: 85 },
  timeoutMS: 20000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['dist', 'coverage', '.nx', 'tmp', '.data', 'reports', '.stryker-tmp', '**/*.log', 'docs', 'deploy'],
};
