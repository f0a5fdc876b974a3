module.exports = { displayName: 'oms', preset: '../../jest.preset.js', rootDir: '.' };
