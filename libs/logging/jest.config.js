module.exports = { displayName: 'logging', preset: '../../jest.preset.js', rootDir: '.' };
