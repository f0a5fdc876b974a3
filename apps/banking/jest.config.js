module.exports = { displayName: 'banking', preset: '../../jest.preset.js', rootDir: '.' };
