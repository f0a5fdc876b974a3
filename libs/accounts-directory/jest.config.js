module.exports = { displayName: 'accounts-directory', preset: '../../jest.preset.js', rootDir: '.' };
