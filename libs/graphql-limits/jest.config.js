module.exports = { displayName: 'graphql-limits', preset: '../../jest.preset.js', rootDir: '.' };
