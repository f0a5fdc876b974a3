module.exports = { displayName: 'testing', preset: '../../jest.preset.js', rootDir: '.' };
