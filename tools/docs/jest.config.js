module.exports = { displayName: 'tool-docs', preset: '../../jest.preset.js', rootDir: '.' };
