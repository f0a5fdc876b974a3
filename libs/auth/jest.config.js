module.exports = { displayName: 'auth', preset: '../../jest.preset.js', rootDir: '.' };
