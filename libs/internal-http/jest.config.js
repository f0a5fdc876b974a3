module.exports = { displayName: 'internal-http', preset: '../../jest.preset.js', rootDir: '.' };
