module.exports = { displayName: 'pagination', preset: '../../jest.preset.js', rootDir: '.' };
