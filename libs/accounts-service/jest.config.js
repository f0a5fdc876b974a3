module.exports = { displayName: 'accounts-service', preset: '../../jest.preset.js', rootDir: '.' };
