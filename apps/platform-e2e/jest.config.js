module.exports = { displayName: 'platform-e2e', preset: '../../jest.preset.js', rootDir: '.' };
