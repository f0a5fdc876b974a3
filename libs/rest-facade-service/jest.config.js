module.exports = { displayName: 'rest-facade-service', preset: '../../jest.preset.js', rootDir: '.' };
