module.exports = { displayName: 'config', preset: '../../jest.preset.js', rootDir: '.' };
