module.exports = { displayName: 'money', preset: '../../jest.preset.js', rootDir: '.' };
