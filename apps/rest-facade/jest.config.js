module.exports = { displayName: 'rest-facade', preset: '../../jest.preset.js', rootDir: '.' };
