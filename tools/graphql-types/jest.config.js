const preset = require('../../jest.preset.js');

module.exports = {
  displayName: 'tool-graphql-types',
  preset: '../../jest.preset.js',
  rootDir: '.',
  // graphql-codegen's plugins require auto-bind, which ships ES modules only: Node 20 loads that, Jest's runtime needs it compiled.
  transform: { ...preset.transform, '/node_modules/auto-bind/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs' } }] },
  transformIgnorePatterns: ['/node_modules/(?!auto-bind/)'],
};
