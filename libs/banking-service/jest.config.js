module.exports = { displayName: 'banking-service', preset: '../../jest.preset.js', rootDir: '.' };
