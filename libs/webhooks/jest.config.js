module.exports = { displayName: 'webhooks', preset: '../../jest.preset.js', rootDir: '.' };
