// The specs mutation testing runs: the library suites that exercise the money and access rules
// directly. One Jest project rooted at the repository, so Stryker can map every test to the
// mutants it covers and rerun only those.
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: 'mutation',
  rootDir: '../..',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.base.json' }] },
  testMatch: require('./targets').specs.map((spec) => `<rootDir>/${spec}`),
};
