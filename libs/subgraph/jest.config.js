module.exports = { displayName: 'subgraph', preset: '../../jest.preset.js', rootDir: '.' };
