module.exports = { displayName: 'gateway-service', preset: '../../jest.preset.js', rootDir: '.' };
