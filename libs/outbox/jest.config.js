module.exports = { displayName: 'outbox', preset: '../../jest.preset.js', rootDir: '.' };
