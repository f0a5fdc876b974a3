module.exports = { displayName: 'accounts', preset: '../../jest.preset.js', rootDir: '.' };
