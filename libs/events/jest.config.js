module.exports = { displayName: 'events', preset: '../../jest.preset.js', rootDir: '.' };
