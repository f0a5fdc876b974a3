module.exports = { displayName: 'rate-limit', preset: '../../jest.preset.js', rootDir: '.' };
