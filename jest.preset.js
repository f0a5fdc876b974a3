// Shared Jest settings: ts-jest without type-checking (tsc runs once in `npm run typecheck`),
// tsconfig path aliases resolved by Nx's resolver, one worker per project: projects already
// run two at a time and every suite talks to the same PostgreSQL and Redis.
const nxPreset = require('@nx/jest/preset').default;

module.exports = {
  ...nxPreset,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/../../tsconfig.base.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: ['**/*.spec.ts'],
  maxWorkers: 1,
  testTimeout: 30000,
};
