module.exports = { displayName: 'redis', preset: '../../jest.preset.js', rootDir: '.' };
