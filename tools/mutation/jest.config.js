// The specs of one mutation group (MUTATION_GROUP, see targets.js), as one Jest project rooted at
// the repository, so Stryker can map every test to the mutants it covers and rerun only those.
const preset = require('../../jest.preset.js');
const groups = require('./targets');

const group = groups[process.env.MUTATION_GROUP ?? ''];
if (!group) throw new Error(`MUTATION_GROUP must be one of ${Object.keys(groups).join(', ')}`);

module.exports = {
  ...preset,
  displayName: `mutation:${process.env.MUTATION_GROUP}`,
  rootDir: '../..',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.base.json' }] },
  testMatch: group.specs.map((spec) => `<rootDir>/${spec}`),
};
