module.exports = { displayName: 'auth-service', preset: '../../jest.preset.js', rootDir: '.' };
